//! The `memlens somas` and `memlens generate somas` commands, run as a user would.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_memlens");
const S: &str = "fixtures/somas";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run memlens");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_has_the_documented_keys_and_hand_checked_values() {
    let f = format!("{S}/Ascend_somas_tensor_offset_1.ir");
    let t = format!("{S}/task_info_graph_1.ir");
    let (code, out, err) = run(&[
        "somas",
        &f,
        "--task-info",
        &t,
        "--json",
        "--node",
        "MaxPool-op4",
        "--tensor",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["format"]["family"], "somas-info");
    assert_eq!(v["format"]["version"], "v2.0-2.3");
    assert_eq!(v["nodes"], 14);
    assert_eq!(v["tensors"], 14);
    assert_eq!(v["control_tensors"], 14);
    assert_eq!(v["parameters"], 5);
    assert_eq!(v["peak"]["node_index"], 2);
    assert_eq!(v["peak"]["node_name"], "ReLU-op3");
    assert_eq!(v["peak"]["in_use_bytes"], 2_295_808);
    assert_eq!(v["reused_bytes"], 2_295_808);
    assert_eq!(v["upper_bound_bytes"], 2_833_920);
    assert_eq!(v["lifelong_bytes"], 197_632);
    assert_eq!(v["max_address_without_lifelong"]["end_bytes"], 2_098_176);
    assert_eq!(v["max_address_without_lifelong"]["tensor_id"], 3);
    assert_eq!(v["max_address_without_lifelong"]["node_name"], "ReLU-op3");
    assert_eq!(v["conflicts"], serde_json::json!([]));
    assert_eq!(v["task_mismatches"], serde_json::json!([]));
    assert_eq!(v["base_address"], 0x1080_8000_0000u64);
    assert_eq!(v["ratios"][0]["name"], "somas_tool_reuse_ratio");
    // Node query: MaxPool-op4 ($3) runs with %4T %5T %3T %0T %1T alive (by offset).
    assert_eq!(
        v["node_query"]["alive_tensors"],
        serde_json::json!([4, 5, 3, 0, 1])
    );
    assert_eq!(v["tensor_query"]["tensor_id"], 4);
    assert_eq!(v["tensor_query"]["nodes"][1]["node"], "AllReduce-op7");
}

#[test]
fn out_writes_somas_tools_file_set() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let f = format!("{S}/Ascend_somas_tensor_offset_1.ir");
    let t = format!("{S}/task_info_graph_1.ir");
    let (code, _, err) = run(&[
        "somas",
        &f,
        "--task-info",
        &t,
        "--out",
        d,
        "--node",
        "MaxPool-op4",
        "--tensor",
        "4",
        "--address",
        "0x108080000300",
        "--address-range",
        "0x108080000000-0x108080000400",
    ]);
    assert_eq!(code, 0, "{err}");
    for name in [
        "graph_nodes.csv",
        "graph_parameters.csv",
        "graph_tensors.csv",
        "MemoryAnalyze.log",
        "StatisticInfo/overview.txt",
        "StatisticInfo/InUseMemory.svg",
        "StatisticInfo/TotalMemory.svg",
        "StatisticInfo/MaxAliveMemory_ReLU-op3_mem_frame.csv",
        "StatisticInfo/MaxAddress_ReLU-op3_mem_frame.csv",
        "MaxPool-op4/MaxPool-op4_mem_frame.csv",
        "MaxPool-op4/Input0_Tensor3_relate_nodes.csv",
        "MaxPool-op4/Input0_Tensor3_relate_tensors.csv",
        "MaxPool-op4/Output0_Tensor4_relate_nodes.csv",
        "MaxPool-op4/Output0_Tensor4_relate_tensors.csv",
        "MaxPool-op4/Workspace0_Tensor5_relate_tensors.csv",
        "CheckTensor_Tensor4_relate_nodes.csv",
        "CheckTensor_Tensor4_relate_tensors.csv",
        "CheckAddress_0x108080000300_tensors_list.csv",
        "CheckAddressRange_0x108080000000-0x108080000400_tensors_list.csv",
        "overwrite_conflicts.csv",
        "task_address_mismatches.csv",
    ] {
        assert!(Path::new(d).join(name).is_file(), "{name} missing");
    }
    let tensors = std::fs::read_to_string(Path::new(d).join("graph_tensors.csv")).unwrap();
    let mut lines = tensors.lines();
    assert_eq!(
        lines.next().unwrap(),
        ",SourceNodeId,SourceNodeName,OutputIndex,SourceStream,StartAddr,StartAddrHex,Size,AlignSize,EndAddr,\
         EndAddrHex,LifeStart,LifeEnd,LifeLong,TensorType,TaskStartAddr,TaskStartAddrHex,TaskSize,TaskEndAddr,\
         TaskEndAddrHex,DestinationStreams,Destinations"
    );
    // %4T: MaxPool-op4 ($3) output 0, base 0x108080000000 + 512, consumed by AllReduce on stream 1.
    let row4 = lines.nth(4).unwrap();
    assert!(
        row4.starts_with("4,3,MaxPool-op4,0,0,18144089342464,0x108080000200,262144,263680,"),
        "{row4}"
    );
    assert!(row4.ends_with(",1,AllReduce-op7"), "{row4}");
    assert_eq!(tensors.lines().count(), 15);
    let nodes = std::fs::read_to_string(Path::new(d).join("graph_nodes.csv")).unwrap();
    // ReLU-op3: index 2, op 3, alive 2295808, in use 2295808 + 86556 static.
    assert!(
        nodes.contains("\nReLU-op3,2,3,0,%2T;%3T,,%2T,%3T,,2295808,2295808,2382364,2382364\n"),
        "{nodes}"
    );
    let overview =
        std::fs::read_to_string(Path::new(d).join("StatisticInfo/overview.txt")).unwrap();
    assert!(overview.contains(
        "Max In Use Memory Node ReLU-op3, index 2, Alive Tensor Size 0.002138GB (2295808)"
    ));
    let addr =
        std::fs::read_to_string(Path::new(d).join("CheckAddress_0x108080000300_tensors_list.csv"))
            .unwrap();
    // 0x300 lies in %2T [0, 0x100200), %4T [0x200, 0x40600), %7T [0, 0x400), %11T [0, 0xa00).
    let ids: Vec<&str> = addr
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(ids, vec!["2", "4", "7", "11"]);
}

#[test]
fn bad_input_exits_2_with_the_message_on_stderr() {
    let f = format!("{S}/somas_solver_input_1.ir");
    let (code, out, err) = run(&["somas", &f, "--json"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with(&format!(
            "memlens: {f}:1: error: wrong file type: this is a SOMAS solver log"
        )),
        "{err}"
    );
    let (code, _, err) = run(&[
        "somas",
        &format!("{S}/Ascend_somas_tensor_offset_1.ir"),
        "--node",
        "NoSuchOp-op9",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--node NoSuchOp-op9: no node with that name"),
        "{err}"
    );
    let (code, _, err) = run(&["somas", "/nonexistent/x.ir"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn generate_then_gate_on_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("g.ir");
    let task = dir.path().join("task_info_graph_1.ir");
    let (code, out, err) = run(&[
        "generate",
        "somas",
        "--flavor",
        "v2.4",
        "--nodes",
        "800",
        "--seed",
        "5",
        "--inject-conflicts",
        "2",
        "--out",
        dump.to_str().unwrap(),
        "--task-info-out",
        task.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let g: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(g["injected_conflicts"].as_array().unwrap().len(), 2);
    let (code, out, _) = run(&[
        "somas",
        dump.to_str().unwrap(),
        "--task-info",
        task.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["conflicts"], g["injected_conflicts"]);
    assert_eq!(v["task_mismatches"], serde_json::json!([]));
    let (code, _, _) = run(&["somas", dump.to_str().unwrap(), "--fail-on-conflict"]);
    assert_eq!(code, 3);
    let clean = format!("{S}/Ascend_somas_tensor_offset_1.ir");
    let (code, out, _) = run(&["somas", &clean, "--fail-on-conflict"]);
    assert_eq!(code, 0);
    assert!(out.contains("Overwrite conflicts: 0"));
}
