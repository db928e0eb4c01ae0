//! Locking against Google's LevelDB (plyvel) and Mojang's (amulet-leveldb, `import leveldb`),
//! which lock `LOCK` with POSIX `fcntl` record locks: a Strata writer and a peer writer must
//! exclude each other in both directions, and a Strata read-only opener must not open under a
//! peer writer.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use strata::{Db, ErrorKind, Options};

/// Opens `path` with a peer, in Python; `open` is the expression that opens it.
const PEERS: [(&str, &str); 2] = [
    (
        "plyvel",
        "import plyvel; db = plyvel.DB(path, create_if_missing=True)",
    ),
    (
        "leveldb",
        "import leveldb; db = leveldb.LevelDB(path, create_if_missing=True)",
    ),
];

/// A peer process holding the database open until its stdin closes.
fn hold(open: &str, path: &str) -> Child {
    let script = format!(
        "import sys\npath = sys.argv[1]\n{open}\nprint('ready', flush=True)\nsys.stdin.read()\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &script, path])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "the peer did not open {path}");
    child
}

fn release(mut child: Child) {
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

/// Tries to open with a peer: `"opened"` or the exception's text.
fn try_peer(open: &str, path: &str) -> String {
    let script = format!(
        "import sys\npath = sys.argv[1]\ntry:\n    {open}\n    print('opened')\n\
         except Exception as e:\n    print('refused', type(e).__name__, e)\n"
    );
    let out = Command::new("python3")
        .args(["-c", &script, path])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn strata_and_leveldb_peers_exclude_each_other() {
    for (peer, open) in PEERS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let path = path.to_str().unwrap();
        // A database written by Strata first, so both sides find one.
        Db::open_path(path, Options::google().create())
            .unwrap()
            .close()
            .unwrap();

        // The peer holds it: Strata's writer and reader are refused.
        let child = hold(open, path);
        let e = Db::open_path(path, Options::google()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Locked, "{peer}: {e}");
        let e = Db::open_path(path, Options::google().read_only()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Locked, "{peer}: {e}");
        release(child);

        // Strata holds it: the peer is refused, and opens once Strata closes.
        let db = Db::open_path(path, Options::google()).unwrap();
        let answer = try_peer(open, path);
        assert!(
            answer.starts_with("refused") && answer.contains("lock"),
            "{peer} while Strata writes: {answer}"
        );
        // A second Strata opener in this process is refused without dropping the lock the
        // peer sees (POSIX record locks die with any descriptor of the file).
        assert_eq!(
            Db::open_path(path, Options::google()).unwrap_err().kind(),
            ErrorKind::Locked
        );
        let answer = try_peer(open, path);
        assert!(answer.starts_with("refused"), "{peer}: {answer}");
        drop(db);

        // A Strata reader also keeps the peer out; two readers share the lock.
        let r1 = Db::open_path(path, Options::google().read_only()).unwrap();
        let r2 = Db::open_path(path, Options::google().read_only()).unwrap();
        drop(r1);
        let answer = try_peer(open, path);
        assert!(
            answer.starts_with("refused"),
            "{peer} under a reader: {answer}"
        );
        drop(r2);
        assert_eq!(try_peer(open, path), "opened", "{peer} after Strata closed");
    }
}

#[test]
fn a_peer_writer_and_a_strata_writer_alternate_on_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let path = path.to_str().unwrap();
    let db = Db::open_path(path, Options::google().create()).unwrap();
    db.put(&Default::default(), b"strata", b"1").unwrap();
    drop(db);
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, plyvel\ndb = plyvel.DB(sys.argv[1])\ndb.put(b'plyvel', b'2')\ndb.close()\n",
            path,
        ])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let db = Db::open_path(path, Options::google()).unwrap();
    let get = |k: &[u8]| db.get(&Default::default(), k).unwrap();
    assert_eq!(get(b"strata").as_deref(), Some(&b"1"[..]));
    assert_eq!(get(b"plyvel").as_deref(), Some(&b"2"[..]));
    let _ = std::io::stdout().flush();
}
