//! A small argument parser: flags (`--name`, `--name value`, `--name=value`) and positionals.

use crate::commands::CliError;

pub struct Args {
    positional: Vec<String>,
    flags: Vec<(String, Option<String>)>,
}

impl Args {
    /// Parses `raw`; `valued` lists the flags that take a value.
    pub fn parse(raw: &[String], valued: &[&str], switches: &[&str]) -> Result<Args, CliError> {
        let mut positional = Vec::new();
        let mut flags = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            let a = &raw[i];
            if let Some(name) = a.strip_prefix("--") {
                let (name, inline) = match name.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (name.to_string(), None),
                };
                if valued.contains(&name.as_str()) {
                    let v = match inline {
                        Some(v) => v,
                        None => {
                            i += 1;
                            raw.get(i)
                                .cloned()
                                .ok_or_else(|| CliError::Usage(format!("--{name} needs a value")))?
                        }
                    };
                    flags.push((name, Some(v)));
                } else if switches.contains(&name.as_str()) && inline.is_none() {
                    flags.push((name, None));
                } else {
                    return Err(CliError::Usage(format!("unknown option --{name}")));
                }
            } else {
                positional.push(a.clone());
            }
            i += 1;
        }
        Ok(Args { positional, flags })
    }

    pub fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, _)| n == name)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.flags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn number(&self, name: &str) -> Result<Option<u64>, CliError> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| CliError::Usage(format!("--{name} takes a number, not {v:?}"))),
        }
    }

    /// Exactly `n` positionals, named for the error message.
    pub fn positionals(&self, names: &[&str]) -> Result<&[String], CliError> {
        if self.positional.len() != names.len() {
            return Err(CliError::Usage(format!(
                "expected {}, got {} argument(s)",
                names.join(" "),
                self.positional.len()
            )));
        }
        Ok(&self.positional)
    }
}
