use std::time::Duration;

use super::{OwnTime, own_time};

#[test]
fn own_time_is_the_total_less_every_wait() {
    let ms = Duration::from_millis;
    assert_eq!(own_time(ms(100), ms(30)), ms(70));
    // Waits of several exchanges (first request and rounds) add up, each counted once.
    assert_eq!(own_time(ms(100), ms(30) + ms(20) + ms(40)), ms(10));
    assert_eq!(own_time(ms(10), ms(30)), Duration::ZERO);
}

#[test]
fn own_time_counts_no_wait_as_own() {
    let mut clock = OwnTime::start();
    let before = clock.own();
    std::thread::sleep(Duration::from_millis(30));
    // The 30 ms were a wait: the own time must not grow by them (only by this test's own work).
    clock.waited(Duration::from_millis(30));
    assert!(
        clock.own() <= before + Duration::from_millis(15),
        "{:?}",
        clock.own()
    );
    clock.waited(Duration::from_secs(3600));
    assert_eq!(clock.own(), Duration::ZERO);
}
