//! The SOMAS dump a folder holds: what `memlens somas FOLDER` and `memlens.somas(folder)` analyse.
//! A user who names a folder means its one memory plan; the task-info file of the same graph
//! beside it gives the real addresses. None, or several, is said in words, never guessed.

use super::recognize::{task_info_in, Dumps, SomasFile};
use crate::input::{InputSet, NothingToAnalyse, Unit, UnitBody};
use std::fmt;

/// The one analysable dump of a set and the task-info file of its graph, if the set has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpInFolder {
    /// The memory plan.
    pub dump: SomasFile,
    /// `task_info_graph_<N>.ir` of the dump's graph (see [`task_info_in`]).
    pub task_info: Option<SomasFile>,
}

/// Why a folder gives no dump to analyse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoDump {
    /// No SOMAS dump at all: what was looked for and the closest things found.
    Nothing {
        /// The core's words of the search.
        nothing: NothingToAnalyse,
        /// Whether the set holds units of another family that can be analysed (the CLI then
        /// points to `memlens PATH`, which analyses whatever is there).
        other_families: bool,
    },
    /// More than one dump: the user names the one meant.
    Several {
        /// The folder as the user gave it.
        folder: String,
        /// The dumps' paths, in the inventory's order.
        dumps: Vec<String>,
    },
}

impl fmt::Display for NoDump {
    /// The message after the front end's prefix: the search's words (with the paths given), or
    /// `FOLDER: N SOMAS dumps; name the one to analyse:` and one path a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoDump::Nothing { nothing, .. } => f.write_str(&nothing.said()),
            NoDump::Several { folder, dumps } => write!(
                f,
                "{folder}: {} SOMAS dumps; name the one to analyse:\n  {}",
                dumps.len(),
                dumps.join("\n  ")
            ),
        }
    }
}

/// The dump of `set` (classified here if needed), which holds the folder `folder` as given.
/// A task-info file is read with its dump, so it does not count as one.
pub fn dump_in_folder(set: &mut InputSet, folder: &str) -> Result<DumpInFolder, NoDump> {
    let wanted = |u: &Unit| u.get::<SomasFile>().is_some_and(|f| f.analysable());
    if let Some(nothing) = set.nothing_to_analyse(&[&Dumps], &wanted) {
        let other_families = set.inventory().is_some_and(|inv| {
            inv.units
                .iter()
                .any(|u| u.get::<SomasFile>().is_none() && u.body().analysable())
        });
        return Err(NoDump::Nothing {
            nothing,
            other_families,
        });
    }
    let inventory = set.classify();
    let dumps: Vec<&SomasFile> = inventory
        .units_of::<SomasFile>()
        .filter(|f| f.analysable())
        .collect();
    match dumps.as_slice() {
        [one] => Ok(DumpInFolder {
            dump: (*one).clone(),
            task_info: task_info_in(inventory, one).cloned(),
        }),
        many => Err(NoDump::Several {
            folder: folder.to_string(),
            dumps: many.iter().map(|d| d.path.clone()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::input_set;

    const DUMP: &[u8] =
        include_bytes!("../../fixtures/classify/job/graphs/rank_0/Ascend_somas_tensor_offset_7.ir");
    const TASK_INFO: &[u8] =
        include_bytes!("../../fixtures/classify/job/graphs/rank_0/task_info_graph_7.ir");
    const SOLVER_INPUT: &[u8] =
        include_bytes!("../../fixtures/classify/job/graphs/rank_0/somas_input_graph_7.ir");

    fn set_of(folder: &str, files: &[(&str, &[u8])]) -> InputSet {
        let mut set = input_set();
        set.add_given(folder);
        for (name, bytes) in files {
            set.add_bytes(&format!("{folder}/{name}"), bytes.to_vec());
        }
        set
    }

    #[test]
    fn one_dump_comes_with_the_task_info_file_of_its_graph() {
        let mut set = set_of(
            "graph",
            &[
                ("task_info_graph_7.ir", TASK_INFO),
                ("Ascend_somas_tensor_offset_7.ir", DUMP),
                ("somas_input_graph_7.ir", SOLVER_INPUT),
            ],
        );
        let found = dump_in_folder(&mut set, "graph").expect("one dump");
        assert_eq!(found.dump.path, "graph/Ascend_somas_tensor_offset_7.ir");
        assert_eq!(found.dump.graph_id, Some(7));
        let task = found.task_info.expect("the task-info file of graph 7");
        assert_eq!(task.path, "graph/task_info_graph_7.ir");
        assert!(!task.analysable());
    }

    #[test]
    fn a_task_info_file_of_another_graph_is_not_taken() {
        let mut set = set_of(
            "graph",
            &[
                ("Ascend_somas_tensor_offset_7.ir", DUMP),
                ("task_info_graph_8.ir", TASK_INFO),
            ],
        );
        let found = dump_in_folder(&mut set, "graph").expect("one dump");
        assert_eq!(found.task_info, None);
    }

    #[test]
    fn several_dumps_are_listed_for_the_user_to_name_one() {
        // The same plan under a name that says nothing: recognised by its first lines, so two.
        let mut set = set_of(
            "rank_0",
            &[
                ("Ascend_somas_tensor_offset_7.ir", DUMP),
                ("plan_renamed.txt", DUMP),
                ("task_info_graph_7.ir", TASK_INFO),
            ],
        );
        let no = dump_in_folder(&mut set, "rank_0").expect_err("two dumps");
        assert_eq!(
            no,
            NoDump::Several {
                folder: "rank_0".into(),
                dumps: vec![
                    "rank_0/Ascend_somas_tensor_offset_7.ir".into(),
                    "rank_0/plan_renamed.txt".into()
                ],
            }
        );
        assert_eq!(
            no.to_string(),
            "rank_0: 2 SOMAS dumps; name the one to analyse:\n  \
             rank_0/Ascend_somas_tensor_offset_7.ir\n  rank_0/plan_renamed.txt"
        );
    }

    #[test]
    fn a_folder_without_a_dump_says_what_was_looked_for_and_found() {
        // A task-info file alone is no dump: it is listed among the things found.
        let mut set = set_of("graph", &[("task_info_graph_7.ir", TASK_INFO)]);
        let Err(NoDump::Nothing {
            nothing,
            other_families,
        }) = dump_in_folder(&mut set, "graph")
        else {
            panic!("expected nothing to analyse");
        };
        assert!(!other_families);
        assert_eq!(nothing.given, ["graph"]);
        assert_eq!(
            nothing.looked_for,
            ["MindSpore SOMAS dumps (`*somas*.ir`, told by their first lines)"]
        );
        assert_eq!(nothing.found.len(), 1);
        assert_eq!(nothing.found[0].path, "graph/task_info_graph_7.ir");
        let empty = dump_in_folder(&mut set_of("empty", &[]), "empty").expect_err("no files");
        assert_eq!(
            empty.to_string(),
            "empty: nothing to analyse: no files at all (looked for MindSpore SOMAS dumps \
             (`*somas*.ir`, told by their first lines))"
        );
    }

    #[test]
    fn a_folder_of_another_family_says_so() {
        let snapshot = include_bytes!("../../fixtures/snapshots/cs336_tiny_mem_snapshot.pickle");
        let mut set = set_of("snap", &[("cs336_tiny_mem_snapshot.pickle", snapshot)]);
        let Err(NoDump::Nothing { other_families, .. }) = dump_in_folder(&mut set, "snap") else {
            panic!("expected nothing to analyse");
        };
        assert!(other_families);
    }
}
