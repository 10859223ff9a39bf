//! A sweep's memory does not grow with its runs' length beyond the reference trajectory
//! (brief item 4, issue 13.4): every swept run is reduced to its consistency error as it
//! goes. Before, each of the swept runs kept its trajectory (32 bytes per step) until the
//! table was computed.

use std::path::Path;
use std::process::{Command, Stdio};

/// Peak resident memory (kB) of a command, read from /proc while it runs.
#[cfg(target_os = "linux")]
fn peak_rss_kb(args: &[&str]) -> u64 {
    // Four workers: four swept runs in flight at once, whatever the machine's cores.
    let mut child = Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .env("RAYON_NUM_THREADS", "4")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                assert!(status.success(), "{args:?}: {status}");
                return peak;
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn sweep_memory_is_the_reference_trajectory_only() {
    let s = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/ball_drop.yaml")
        .display()
        .to_string();
    let rss = |steps: u32| {
        let duration = format!("simulation.duration={}", f64::from(steps) * 1e-3);
        let args = [
            "sweep",
            &s,
            "--eps",
            "1e-2,1e-3,1e-4,1e-5",
            "--solver",
            "ncp-admm",
            "--set",
            &duration,
        ];
        peak_rss_kb(&args)
    };
    let short = rss(2_000);
    let long = rss(100_000);
    // 98,000 more steps: the reference's trajectory takes 3.1 MB (6.3 MB of capacity at
    // most); measured +3.6 MB. Keeping the four swept runs in flight as well (before)
    // measured +15.3 MB.
    assert!(
        long < short + 8_000,
        "peak RSS {short} kB for 2,000 steps, {long} kB for 100,000"
    );
}
