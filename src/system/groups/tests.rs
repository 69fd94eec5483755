use super::*;
use std::os::unix::process::CommandExt;

#[test]
fn a_running_process_runs_and_a_reaped_one_does_not() {
    assert!(leader_runs(std::process::id()));
    let mut done = Command::new("true").spawn().unwrap();
    let pid = done.id();
    done.wait().unwrap();
    assert!(!leader_runs(pid));
}

#[test]
fn a_spawned_group_is_recorded_until_stopped() {
    let child = spawn(
        || Command::new("true").process_group(0).spawn(),
        |c| Some(c.id()),
    )
    .unwrap();
    let pgid = child.id();
    assert!(groups().live.contains(&pgid));
    stopped(pgid);
    assert!(!groups().live.contains(&pgid));
    let mut child = child;
    child.wait().unwrap();
}
