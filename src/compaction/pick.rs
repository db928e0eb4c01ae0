//! Choosing a compaction (LevelDB `VersionSet::PickCompaction`, `CompactRange`,
//! `SetupOtherInputs`). Everything here is a pure function of a Version, the compaction
//! pointers and a few limits, so it is tested without any I/O.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::key::{compare_internal_keys, extract_user_key};
use crate::options::config::NUM_LEVELS;
use crate::version::{BusyRange, FileMetaData, Version, VersionEdit};

/// Limits that shape a compaction.
#[derive(Clone, Copy, Debug)]
pub struct CompactionLimits {
    /// Target size of an output table.
    pub max_file_size: u64,
    /// Allow size-triggered compactions.
    pub size_triggered: bool,
    /// Allow seek-triggered compactions.
    pub seek_triggered: bool,
}

impl CompactionLimits {
    fn max_grandparent_overlap(&self) -> u64 {
        10 * self.max_file_size
    }
    fn expanded_limit(&self) -> u64 {
        25 * self.max_file_size
    }
}

/// A chosen compaction: `inputs[0]` from `level`, `inputs[1]` from `level + 1`.
#[derive(Debug)]
pub struct Compaction {
    pub level: usize,
    pub inputs: [Vec<Arc<FileMetaData>>; 2],
    /// Files of `level + 2` overlapping the output (to cut outputs that would overlap much).
    pub grandparents: Vec<Arc<FileMetaData>>,
    pub input_version: Arc<Version>,
    pub limits: CompactionLimits,
    /// Records the new compaction pointer; the runner adds the file changes.
    pub edit: VersionEdit,
    grandparent_index: usize,
    seen_key: bool,
    overlapped_bytes: u64,
    level_ptrs: [usize; NUM_LEVELS],
}

fn total_size(files: &[Arc<FileMetaData>]) -> u64 {
    files.iter().map(|f| f.file_size).sum()
}

/// Smallest and largest internal keys over `files` (non-empty).
fn key_range<'a>(files: impl Iterator<Item = &'a Arc<FileMetaData>>) -> (Vec<u8>, Vec<u8>) {
    let mut smallest: Option<&[u8]> = None;
    let mut largest: Option<&[u8]> = None;
    for f in files {
        if smallest.is_none_or(|s| compare_internal_keys(&f.smallest, s) == Ordering::Less) {
            smallest = Some(&f.smallest);
        }
        if largest.is_none_or(|l| compare_internal_keys(&f.largest, l) == Ordering::Greater) {
            largest = Some(&f.largest);
        }
    }
    (
        smallest.unwrap_or_default().to_vec(),
        largest.unwrap_or_default().to_vec(),
    )
}

/// Adds files of `level_files` whose smallest key has the same user key as the largest key of
/// `chosen` (LevelDB's `AddBoundaryInputs`): otherwise a newer version of that user key could
/// stay behind in a level above an older one.
fn add_boundary_inputs(level_files: &[Arc<FileMetaData>], chosen: &mut Vec<Arc<FileMetaData>>) {
    if chosen.is_empty() {
        return;
    }
    let (_, mut largest) = key_range(chosen.iter());
    loop {
        let boundary = level_files
            .iter()
            .filter(|f| {
                compare_internal_keys(&f.smallest, &largest) == Ordering::Greater
                    && extract_user_key(&f.smallest) == extract_user_key(&largest)
            })
            .min_by(|a, b| compare_internal_keys(&a.smallest, &b.smallest));
        match boundary {
            Some(f) if !chosen.iter().any(|c| c.number == f.number) => {
                largest = f.largest.clone();
                chosen.push(f.clone());
            }
            _ => return,
        }
    }
}

impl Compaction {
    fn new(
        level: usize,
        inputs0: Vec<Arc<FileMetaData>>,
        version: &Arc<Version>,
        limits: CompactionLimits,
    ) -> Self {
        let mut c = Compaction {
            level,
            inputs: [inputs0, Vec::new()],
            grandparents: Vec::new(),
            input_version: version.clone(),
            limits,
            edit: VersionEdit::default(),
            grandparent_index: 0,
            seen_key: false,
            overlapped_bytes: 0,
            level_ptrs: [0; NUM_LEVELS],
        };
        c.setup_other_inputs();
        c
    }

    fn setup_other_inputs(&mut self) {
        let v = self.input_version.clone();
        let level = self.level;
        add_boundary_inputs(&v.files[level], &mut self.inputs[0]);
        let (smallest, largest) = key_range(self.inputs[0].iter());
        self.inputs[1] = v.overlapping_inputs(
            level + 1,
            Some(extract_user_key(&smallest)),
            Some(extract_user_key(&largest)),
        );
        add_boundary_inputs(&v.files[level + 1], &mut self.inputs[1]);
        let (mut all_start, mut all_limit) =
            key_range(self.inputs[0].iter().chain(self.inputs[1].iter()));
        let mut largest = largest;

        // Grow the level's inputs if that does not pull in more files of the next level.
        if !self.inputs[1].is_empty() {
            let mut expanded0 = v.overlapping_inputs(
                level,
                Some(extract_user_key(&all_start)),
                Some(extract_user_key(&all_limit)),
            );
            add_boundary_inputs(&v.files[level], &mut expanded0);
            let inputs1_size = total_size(&self.inputs[1]);
            let expanded0_size = total_size(&expanded0);
            if expanded0.len() > self.inputs[0].len()
                && inputs1_size + expanded0_size < self.limits.expanded_limit()
            {
                let (new_start, new_limit) = key_range(expanded0.iter());
                let mut expanded1 = v.overlapping_inputs(
                    level + 1,
                    Some(extract_user_key(&new_start)),
                    Some(extract_user_key(&new_limit)),
                );
                add_boundary_inputs(&v.files[level + 1], &mut expanded1);
                if expanded1.len() == self.inputs[1].len() {
                    largest = new_limit;
                    self.inputs = [expanded0, expanded1];
                    (all_start, all_limit) =
                        key_range(self.inputs[0].iter().chain(self.inputs[1].iter()));
                }
            }
        }
        if level + 2 < NUM_LEVELS {
            self.grandparents = v.overlapping_inputs(
                level + 2,
                Some(extract_user_key(&all_start)),
                Some(extract_user_key(&all_limit)),
            );
        }
        // The next compaction of this level starts after this one's range.
        self.edit.compact_pointers.push((level, largest));
    }

    /// Where the outputs will go: level `level + 1`, within the span of every input (an
    /// output holds only input keys). Flushes that run before the install keep out of it.
    pub fn busy_range(&self) -> BusyRange {
        let (smallest, largest) = key_range(self.inputs.iter().flatten());
        BusyRange {
            level: self.level + 1,
            smallest: extract_user_key(&smallest).to_vec(),
            largest: extract_user_key(&largest).to_vec(),
        }
    }

    /// A single file that can move down a level without rewriting.
    pub fn is_trivial_move(&self) -> bool {
        self.inputs[0].len() == 1
            && self.inputs[1].is_empty()
            && total_size(&self.grandparents) <= self.limits.max_grandparent_overlap()
    }

    /// Records the deletion of every input file in `edit`.
    pub fn add_input_deletions(&self, edit: &mut VersionEdit) {
        for (i, files) in self.inputs.iter().enumerate() {
            for f in files {
                edit.delete_file(self.level + i, f.number);
            }
        }
    }

    /// True if no level below the output holds `user_key` (so a deletion can be dropped).
    /// Calls must come in increasing key order.
    pub fn is_base_level_for_key(&mut self, user_key: &[u8]) -> bool {
        let v = &self.input_version;
        for lvl in self.level + 2..NUM_LEVELS {
            let files = &v.files[lvl];
            while self.level_ptrs[lvl] < files.len() {
                let f = &files[self.level_ptrs[lvl]];
                if user_key <= extract_user_key(&f.largest) {
                    if user_key >= extract_user_key(&f.smallest) {
                        return false;
                    }
                    break;
                }
                self.level_ptrs[lvl] += 1;
            }
        }
        true
    }

    /// True if the output should be cut before `ikey` (it would overlap too much of the
    /// grandparent level). Calls must come in increasing key order.
    pub fn should_stop_before(&mut self, ikey: &[u8]) -> bool {
        while self.grandparent_index < self.grandparents.len()
            && compare_internal_keys(ikey, &self.grandparents[self.grandparent_index].largest)
                == Ordering::Greater
        {
            if self.seen_key {
                self.overlapped_bytes += self.grandparents[self.grandparent_index].file_size;
            }
            self.grandparent_index += 1;
        }
        self.seen_key = true;
        if self.overlapped_bytes > self.limits.max_grandparent_overlap() {
            self.overlapped_bytes = 0;
            true
        } else {
            false
        }
    }

    pub fn num_input_files(&self, which: usize) -> usize {
        self.inputs[which].len()
    }
}

/// The compaction the Version most needs, if any: size-triggered first, then seek-triggered.
pub fn pick_compaction(
    version: &Arc<Version>,
    compact_pointers: &[Vec<u8>; NUM_LEVELS],
    limits: CompactionLimits,
) -> Option<Compaction> {
    let (level, mut inputs0) = if limits.size_triggered && version.compaction_score >= 1.0 {
        let level = version.compaction_level;
        let pointer = &compact_pointers[level];
        let first = version.files[level]
            .iter()
            .find(|f| {
                pointer.is_empty()
                    || compare_internal_keys(&f.largest, pointer) == Ordering::Greater
            })
            .or_else(|| version.files[level].first())?;
        (level, vec![first.clone()])
    } else if limits.seek_triggered {
        let (level, f) = version.file_to_compact.lock().unwrap().clone()?;
        if level + 1 >= NUM_LEVELS {
            return None;
        }
        (level, vec![f])
    } else {
        return None;
    };
    if level == 0 {
        // Level-0 files overlap each other: take every one the range touches.
        let (smallest, largest) = key_range(inputs0.iter());
        inputs0 = version.overlapping_inputs(
            0,
            Some(extract_user_key(&smallest)),
            Some(extract_user_key(&largest)),
        );
    }
    Some(Compaction::new(level, inputs0, version, limits))
}

/// A compaction of the files of `level` overlapping `[begin, end]` (user keys), limited to
/// about one output file's worth for levels > 0; `None` if nothing overlaps.
pub fn range_compaction(
    version: &Arc<Version>,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    limits: CompactionLimits,
) -> Option<Compaction> {
    if level + 1 >= NUM_LEVELS {
        return None;
    }
    let mut inputs = version.overlapping_inputs(level, begin, end);
    if inputs.is_empty() {
        return None;
    }
    if level > 0 {
        let mut total = 0;
        for i in 0..inputs.len() {
            total += inputs[i].file_size;
            if total >= limits.max_file_size {
                inputs.truncate(i + 1);
                break;
            }
        }
    }
    Some(Compaction::new(level, inputs, version, limits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};

    fn file(number: u64, smallest: &str, largest: &str, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData::new(
            number,
            size,
            make_internal_key(smallest.as_bytes(), 100, ValueType::Value),
            make_internal_key(largest.as_bytes(), 100, ValueType::Value),
        ))
    }

    fn version(levels: Vec<Vec<Arc<FileMetaData>>>, trigger: usize) -> Arc<Version> {
        let mut files: [Vec<Arc<FileMetaData>>; NUM_LEVELS] = Default::default();
        for (l, fs) in levels.into_iter().enumerate() {
            files[l] = fs;
        }
        let mut v = Version::from_levels(files).unwrap();
        v.finalize(trigger);
        Arc::new(v)
    }

    const LIMITS: CompactionLimits = CompactionLimits {
        max_file_size: 2 << 20,
        size_triggered: true,
        seek_triggered: true,
    };

    #[test]
    fn a_flush_keeps_out_of_a_running_compactions_output_range() {
        // Level 1: [a, c] and [x, z], a gap between them; nothing at level 2.
        let v = version(
            vec![
                vec![],
                vec![file(1, "a", "c", 1000), file(2, "x", "z", 1000)],
            ],
            4,
        );
        let max = LIMITS.max_file_size;
        assert_eq!(v.pick_level_for_memtable_output(b"m", b"n", max, None), 2);
        // A manual compaction of level 1 takes both tables: its outputs span the gap.
        let c = range_compaction(&v, 1, None, None, LIMITS).unwrap();
        let busy = c.busy_range();
        assert_eq!(
            busy,
            BusyRange {
                level: 2,
                smallest: b"a".to_vec(),
                largest: b"z".to_vec()
            }
        );
        assert_eq!(
            v.pick_level_for_memtable_output(b"m", b"n", max, Some(&busy)),
            1
        );
        // Outside the span the memtable still goes down to level 2.
        assert_eq!(
            v.pick_level_for_memtable_output(b"zz", b"zz", max, Some(&busy)),
            2
        );
        // Outputs going to level 1 keep it at level 0.
        let busy = BusyRange { level: 1, ..busy };
        assert_eq!(
            v.pick_level_for_memtable_output(b"m", b"n", max, Some(&busy)),
            0
        );
        assert_eq!(
            v.pick_level_for_memtable_output(b"zz", b"zz", max, Some(&busy)),
            2
        );
    }

    #[test]
    fn nothing_to_do_below_the_triggers() {
        let v = version(vec![vec![file(1, "a", "b", 1000)]], 4);
        assert!(pick_compaction(&v, &Default::default(), LIMITS).is_none());
    }

    #[test]
    fn level0_compaction_takes_all_overlapping_files_and_their_level1_overlap() {
        let v = version(
            vec![
                vec![
                    file(10, "a", "c", 1000),
                    file(11, "b", "e", 1000),
                    file(12, "x", "z", 1000),
                    file(13, "d", "f", 1000),
                ],
                vec![
                    file(5, "a", "b", 1000),
                    file(6, "e", "g", 1000),
                    file(7, "h", "k", 1000),
                ],
            ],
            4,
        );
        assert_eq!(v.compaction_level, 0);
        let c = pick_compaction(&v, &Default::default(), LIMITS).unwrap();
        let mut n0: Vec<u64> = c.inputs[0].iter().map(|f| f.number).collect();
        n0.sort();
        // Newest file first in level 0 is 13 ("d".."f"), which chains to 11 and 10.
        assert_eq!(n0, vec![10, 11, 13]);
        let n1: Vec<u64> = c.inputs[1].iter().map(|f| f.number).collect();
        assert_eq!(n1, vec![5, 6]);
        assert!(!c.is_trivial_move());
        assert_eq!(c.edit.compact_pointers[0].0, 0);
    }

    #[test]
    fn size_compaction_follows_the_compaction_pointer_round_robin() {
        let big = 6 << 20; // level 1 over its 10 MB budget
        let v = version(
            vec![
                vec![],
                vec![
                    file(1, "a", "c", big),
                    file(2, "d", "f", big),
                    file(3, "g", "i", big),
                ],
            ],
            4,
        );
        assert_eq!(v.compaction_level, 1);
        let mut pointers: [Vec<u8>; NUM_LEVELS] = Default::default();
        let c = pick_compaction(&v, &pointers, LIMITS).unwrap();
        assert_eq!(c.inputs[0][0].number, 1);
        assert!(c.is_trivial_move());
        pointers[1] = c.edit.compact_pointers[0].1.clone();
        let c = pick_compaction(&v, &pointers, LIMITS).unwrap();
        assert_eq!(c.inputs[0][0].number, 2);
        pointers[1] = make_internal_key(b"z", 1, ValueType::Value);
        let c = pick_compaction(&v, &pointers, LIMITS).unwrap();
        assert_eq!(c.inputs[0][0].number, 1, "wraps around");
    }

    #[test]
    fn seek_compaction_and_switches() {
        let v = version(
            vec![
                vec![],
                vec![file(1, "a", "c", 1000)],
                vec![file(2, "a", "z", 1000)],
            ],
            4,
        );
        assert!(pick_compaction(&v, &Default::default(), LIMITS).is_none());
        *v.file_to_compact.lock().unwrap() = Some((1, v.files[1][0].clone()));
        let c = pick_compaction(&v, &Default::default(), LIMITS).unwrap();
        assert_eq!(
            (c.level, c.inputs[0][0].number, c.inputs[1][0].number),
            (1, 1, 2)
        );
        let off = CompactionLimits {
            seek_triggered: false,
            ..LIMITS
        };
        assert!(pick_compaction(&v, &Default::default(), off).is_none());
    }

    #[test]
    fn boundary_inputs_keep_one_user_key_together() {
        // Two level-1 files split one user key "k" across their boundary.
        let f1 = Arc::new(FileMetaData::new(
            1,
            1000,
            make_internal_key(b"a", 100, ValueType::Value),
            make_internal_key(b"k", 50, ValueType::Value),
        ));
        let f2 = Arc::new(FileMetaData::new(
            2,
            1000,
            make_internal_key(b"k", 40, ValueType::Value),
            make_internal_key(b"m", 100, ValueType::Value),
        ));
        let v = version(vec![vec![], vec![f1, f2]], 4);
        let c = range_compaction(&v, 1, Some(b"a"), Some(b"b"), LIMITS).unwrap();
        let n: Vec<u64> = c.inputs[0].iter().map(|f| f.number).collect();
        assert_eq!(n, vec![1, 2]);
    }

    #[test]
    fn base_level_and_output_cutting() {
        let v = version(
            vec![
                vec![],
                vec![file(1, "a", "z", 1000)],
                vec![],
                vec![file(3, "c", "d", 1000), file(4, "p", "q", 1000)],
            ],
            4,
        );
        let mut c = range_compaction(&v, 1, None, None, LIMITS).unwrap();
        assert!(c.is_base_level_for_key(b"a"));
        assert!(!c.is_base_level_for_key(b"c"));
        assert!(c.is_base_level_for_key(b"e"));
        assert!(!c.is_base_level_for_key(b"q"));
        assert!(c.is_base_level_for_key(b"r"));
        let limits = CompactionLimits {
            max_file_size: 100,
            ..LIMITS
        };
        let g = version(
            vec![
                vec![],
                vec![file(1, "a", "z", 10)],
                vec![file(2, "b", "b", 10)],
                vec![
                    file(3, "c", "c", 600),
                    file(4, "e", "e", 600),
                    file(5, "g", "g", 600),
                ],
            ],
            4,
        );
        let k = |s: &str| make_internal_key(s.as_bytes(), 1, ValueType::Value);
        // Past "c" the output overlaps 600 bytes of grandparents, past "e" 1200 > 10 * 100:
        // the output is cut before "f", and the count starts again.
        let mut c2 = range_compaction(&g, 1, None, None, limits).unwrap();
        let cuts: Vec<bool> = ["b", "d", "f", "h"]
            .iter()
            .map(|s| c2.should_stop_before(&k(s)))
            .collect();
        assert_eq!(cuts, vec![false, false, true, false]);
        assert_eq!(c2.num_input_files(0), 1);
    }
}
