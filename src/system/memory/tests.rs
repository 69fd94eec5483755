use std::path::Path;

use super::*;

#[test]
fn stat_pgrp_reads_the_field_after_a_command_with_spaces_and_parentheses() {
    let stat = "4242 (node (worker) 1) S 4000 4100 4100 0 -1 4194560 1 0";
    assert_eq!(stat_pgrp(stat), Some(4100));
    assert_eq!(stat_pgrp("no command here"), None);
    assert_eq!(stat_pgrp("1 (x) S 0"), None);
}

#[test]
fn status_kib_reads_a_kb_field_and_not_a_longer_name() {
    let status = "Name:\tnode\nVmHWMX:\t1 kB\nVmHWM:\t  123456 kB\nVmRSS:\t  100000 kB\n";
    assert_eq!(status_kib(status, "VmHWM"), Some(123_456));
    assert_eq!(status_kib(status, "VmRSS"), Some(100_000));
    assert_eq!(status_kib(status, "VmSwap"), None);
}

/// Only Linux has `/proc` (elsewhere the test does not exist, rather than pass having read nothing).
#[test]
#[cfg(target_os = "linux")]
fn this_process_group_has_a_peak_on_linux() {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat on Linux");
    let pgid = stat_pgrp(&stat).expect("a process group in /proc/self/stat");
    assert!(group_members(Path::new("/proc"), pgid).contains(&std::process::id()));
    let kib = group_hwm_kib(Path::new("/proc"), pgid).expect("VmHWM of this group");
    assert!(kib > 0);
    let sampler = PeakSampler::start(pgid, std::time::Duration::from_millis(10));
    assert!(sampler.finish().is_some_and(|k| k > 0));
}

#[test]
fn a_group_without_processes_has_no_figure() {
    let tmp = crate::scratch::folder("proc");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("12")).expect("scratch /proc");
    std::fs::write(dir.join("12/stat"), "12 (sh) S 1 12 12 0").expect("stat");
    std::fs::write(dir.join("12/status"), "VmHWM:\t2048 kB\n").expect("status");
    assert_eq!(group_hwm_kib(dir, 12), Some(2048));
    assert_eq!(group_hwm_kib(dir, 13), None);
}

#[test]
fn the_machine_note_names_cpus_and_memory() {
    let tmp = crate::scratch::folder("machine");
    let dir = tmp.path();
    assert_eq!(machine_note(dir), "unknown machine");
    std::fs::write(
        dir.join("cpuinfo"),
        "processor\t: 0\nmodel name\t: Test CPU @ 2GHz\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 2GHz\n",
    )
    .expect("cpuinfo");
    std::fs::write(dir.join("meminfo"), "MemTotal:       8388608 kB\n").expect("meminfo");
    assert_eq!(machine_note(dir), "2 CPUs (Test CPU @ 2GHz), 8 GiB RAM");
}
