#!/usr/bin/env python3
"""Screenshots of recorded runs in the Rerun viewer, rendered without a GPU.

For each scenario (default: Solo-12 standing, Talos standing, the Allegro hand and its
ball, the cube pyramid) this writes a run (`contactbench.write_run`, `--duration` s with
`--solver`), exports it to a Rerun recording (`contactbench.export_rerun`), writes a
blueprint beside it (the 3D view only, the camera aimed at the objects and contacts of the
step shown), and opens both in the real Rerun viewer on a virtual X display (Xvfb) with
Mesa's software Vulkan driver (lavapipe). Through the viewer's control API
(`rerun.experimental.ViewerClient`) it waits for the recording to load, places the time
line at the step of the run's largest contact force (the step whose force arrow is the
longest, 0.3 m), has the viewer save a screenshot, and closes the viewer; the picture is
shrunk to at most `--width` pixels.

Everything goes under `--out`: `runs/<scenario>/` (the run folders), `<scenario>.rrd`,
`<scenario>.rbl`, `<scenario>.png` and `logs/<scenario>.log` (the viewer's output); the
viewer's own settings and caches live in a scratch home folder inside `--out`, removed at
the end. Existing files of the same names are replaced.

Needs, in the running Python: the package `contactbench` (python/install.sh) and
`rerun-sdk` 0.41 (`pip install 'rerun-sdk>=0.41,<0.42'`); on the system: Xvfb, Mesa's
Vulkan drivers, the X libraries the viewer's window opens with, and ImageMagick. Run as
root on Debian, the missing ones are installed with apt-get (`--no-install` refuses
instead).

Example (what made docs/viewer/rerun/*.png):
  CONTACTBENCH_CACHE=robots/cache python/.venv/bin/python tools/viewer_screenshots.py \
      --out /tmp/viewer-shots
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SCENARIOS = ["solo_standing", "talos_standing", "allegro_ball", "pile_pyramid"]
#: Debian packages: the virtual display, the software Vulkan driver (lavapipe), the X
#: libraries the viewer's window (winit) loads at run time, and ImageMagick's `convert`.
APT_PACKAGES = [
    "xvfb",
    "mesa-vulkan-drivers",
    "libvulkan1",
    "libxkbcommon-x11-0",
    "libxcursor1",
    "libxrandr2",
    "libxi6",
    "imagemagick",
    "xdotool",
]
#: Where Mesa's Debian package puts the manifests of its Vulkan drivers.
VULKAN_ICDS = Path("/usr/share/vulkan/icd.d")
#: Seconds allowed to the viewer to answer its first request, and to load a recording.
VIEWER_START_TIMEOUT = 60
LOADING_TIMEOUT = 300
#: Pixels of the virtual screen right of and below the viewer's window, where the mouse
#: pointer is parked (over the window it would show a tooltip).
POINTER_MARGIN = 64
#: Seconds a request to the viewer is repeated (it answers each within 15 s or gives up;
#: the first frames of a software renderer on a busy machine can take minutes).
REQUEST_TIMEOUT = 600
#: Direction from the scene's centre to the camera (a three-quarter view from the front
#: right, above), and the camera's distance in scene radii.
EYE_DIRECTION = np.array([1.0, -1.4, 0.8])
EYE_DISTANCE = 2.4
#: The colour of contactbench.viewer's force arrows, looked for in each picture (the
#: contact points, 8 mm balls, are often hidden inside the feet that touch).
FORCE_COLOUR = (240, 150, 30)


class ScreenshotError(RuntimeError):
    """A step of the screenshots failed; the message says which and how to fix it."""


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for everything written")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS,
                        help="a scenario (repeatable; default: all four)")
    parser.add_argument("--duration", type=float, default=0.15, help="simulated seconds per run")
    parser.add_argument("--solver", default="ncp-admm", help="the solver of every run")
    parser.add_argument("--window", default="1280x800", help="the viewer's window, in points")
    parser.add_argument("--width", type=int, default=1280, help="largest width (px) of the PNGs")
    parser.add_argument("--no-install", action="store_true",
                        help="refuse instead of installing missing system packages")
    return parser.parse_args(argv)


def import_python_packages():
    """Returns the modules `contactbench` and `rerun.blueprint`, or says how to get them."""
    try:
        import contactbench
        from contactbench._native import run_trajectory  # noqa: F401 (the viewer's export needs it)
    except ImportError as error:
        raise ScreenshotError(
            f"{sys.executable} cannot import contactbench's viewer export ({error}): build the "
            "package with python/install.sh and run this script with python/.venv/bin/python"
        ) from error
    try:
        import rerun.blueprint as rrb
    except ImportError as error:
        raise ScreenshotError(
            f"{sys.executable} cannot import rerun ({error}): pip install 'rerun-sdk>=0.41,<0.42'"
        ) from error
    return contactbench, rrb


def missing_system_tools():
    """The system tools this script runs that are not here."""
    missing = [tool for tool in ("Xvfb", "convert", "xdotool") if shutil.which(tool) is None]
    if lavapipe_manifest() is None:
        missing.append(f"Mesa's software Vulkan driver (lvp_icd.*.json in {VULKAN_ICDS})")
    return missing


def lavapipe_manifest():
    """The manifest of Mesa's software Vulkan driver, if installed."""
    found = sorted(VULKAN_ICDS.glob("lvp_icd*.json"))
    return found[0] if found else None


def ensure_system_tools(no_install):
    """Installs the Debian packages when a tool is missing (as root, unless `no_install`)."""
    missing = missing_system_tools()
    if not missing:
        return
    command = ["apt-get", "install", "-y", "--no-install-recommends", *APT_PACKAGES]
    if no_install or os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ScreenshotError(
            f"missing: {', '.join(missing)}; on Debian or Ubuntu, as root: {' '.join(command)}"
        )
    print(f"viewer_screenshots: installing {' '.join(APT_PACKAGES)} (missing: {', '.join(missing)})",
          file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if apt_get(command, env) != 0:
        # The package lists may be absent or stale: fetch them once and try again.
        for attempt in (["apt-get", "update"], command):
            if apt_get(attempt, env) != 0:
                raise ScreenshotError(f"`{' '.join(attempt)}` failed (its output is above)")
    still_missing = missing_system_tools()
    if still_missing:
        raise ScreenshotError(f"`{' '.join(command)}` did not provide: {', '.join(still_missing)}")


def apt_get(command, env):
    """Runs an apt-get command, its output on stderr; returns its exit code."""
    return subprocess.run(command, env=env, stdout=sys.stderr).returncode


def start_virtual_display(width, height, log):
    """Starts Xvfb on a free display, POINTER_MARGIN px larger than the viewer's window both
    ways; returns the process and the display's name."""
    width, height = width + POINTER_MARGIN, height + POINTER_MARGIN
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=log, stderr=log,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number.isdigit():
        xvfb.kill()
        xvfb.wait()
        raise ScreenshotError(f"Xvfb did not start (its output: {log.name})")
    return xvfb, f":{number}"


def step_of_largest_force(trajectory):
    """The index of the step whose largest contact force is the run's largest."""
    largest = [float(np.linalg.norm(c["forces"], axis=1).max()) if len(c["forces"]) else 0.0
               for c in trajectory["contacts"]]
    return int(np.argmax(largest))


def world_points_at(trajectory, k, force_length):
    """The vertices of every link and body at step `k`, its contact points and the tips of
    its force arrows (the ground left out): what the camera must see."""
    points = []
    for obj, pose in zip(trajectory["objects"], trajectory["poses"][k]):
        if obj["role"] == "ground":
            continue
        points.append(pose[:3] + rotate(pose[3:], np.asarray(obj["vertices"], dtype=float)))
    contacts = trajectory["contacts"][k]
    if len(contacts["points"]):
        forces = np.asarray(contacts["forces"])
        largest = np.linalg.norm(forces, axis=1).max()
        points.append(contacts["points"])
        if largest > 0.0:
            points.append(contacts["points"] + forces * (force_length / largest))
    return np.concatenate(points)


def rotate(quaternion_xyzw, vectors):
    """Rotates row vectors by a unit quaternion (x, y, z, w): v' = v + 2w(u×v) + 2u×(u×v)."""
    u, w = np.asarray(quaternion_xyzw[:3]), quaternion_xyzw[3]
    uv = np.cross(u, vectors)
    return vectors + 2.0 * w * uv + 2.0 * np.cross(u, uv)


def camera_for(points):
    """An orbit camera looking at the centre of the points' bounding box from
    EYE_DIRECTION, EYE_DISTANCE radii away (the radius at least 5 cm)."""
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2.0
    radius = max(float(np.linalg.norm(high - low)) / 2.0, 0.05)
    eye = centre + EYE_DIRECTION / np.linalg.norm(EYE_DIRECTION) * EYE_DISTANCE * radius
    return eye, centre


def write_blueprint(rrb, path, name, eye, target):
    """The viewer's layout: the 3D view alone, without its line grid (the ground is drawn),
    the camera at `eye` looking at `target`, the side panels hidden and the time line
    paused on `sim_time`."""
    blueprint = rrb.Blueprint(
        rrb.Spatial3DView(
            origin="/", name=name, line_grid=rrb.LineGrid3D(visible=False),
            eye_controls=rrb.EyeControls3D(position=eye, look_target=target, eye_up=(0.0, 0.0, 1.0)),
        ),
        rrb.TopPanel(state="hidden"),
        rrb.BlueprintPanel(state="hidden"),
        rrb.SelectionPanel(state="hidden"),
        rrb.TimePanel(state="collapsed", timeline="sim_time", play_state="paused"),
    )
    blueprint.save("contactbench", path)


def free_port():
    """A TCP port of the loopback interface free at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def connect(viewer, port):
    """A control client of the viewer once it answers (or why it did not)."""
    from rerun.experimental import ViewerClient

    deadline = time.monotonic() + VIEWER_START_TIMEOUT
    while True:
        if viewer.poll() is not None:
            raise ScreenshotError(f"the viewer exited {viewer.returncode} at start")
        try:
            client = ViewerClient.connect(f"rerun+http://127.0.0.1:{port}/proxy")
            client.get_state()
            return client
        except (ConnectionError, TimeoutError) as error:
            if time.monotonic() > deadline:
                raise ScreenshotError(f"the viewer did not answer in {VIEWER_START_TIMEOUT} s: {error}") from error
            time.sleep(1.0)


def asked(request, what):
    """The viewer's answer to `request`, asked again while the viewer, busy painting with a
    software renderer, lets it time out (for at most REQUEST_TIMEOUT s)."""
    deadline = time.monotonic() + REQUEST_TIMEOUT
    while True:
        try:
            return request()
        except (ConnectionError, TimeoutError) as error:
            if time.monotonic() > deadline:
                raise ScreenshotError(f"the viewer did not {what} in {REQUEST_TIMEOUT} s: {error}") from error


def loaded_recording(client, steps):
    """The recording once the viewer holds all `steps` steps of it."""
    deadline = time.monotonic() + LOADING_TIMEOUT
    while time.monotonic() < deadline:
        state = asked(client.get_state, "report its state")
        for recording in state.recordings:
            ends = {t.name: t.end for t in recording.timelines}
            if not state.loading and ends.get("step") == steps - 1:
                return recording
        time.sleep(1.0)
    raise ScreenshotError(f"the viewer did not load the recording's {steps} steps in {LOADING_TIMEOUT} s")


def request_screenshot(client, png):
    """Has the viewer save a screenshot to `png`. A frame of a software renderer on a busy
    machine can take longer than the viewer's 15 s answer: then the file it writes after
    the request timed out is awaited (until it is whole: its size steady and readable)."""
    try:
        client.save_screenshot(str(png))
    except (ConnectionError, TimeoutError):
        pass
    deadline = time.monotonic() + REQUEST_TIMEOUT
    size = -1
    while time.monotonic() < deadline:
        if png.exists() and png.stat().st_size == size and readable(png):
            return
        size = png.stat().st_size if png.exists() else -1
        time.sleep(2.0)
    raise ScreenshotError(f"the viewer did not save a screenshot in {REQUEST_TIMEOUT} s")


def readable(png):
    """Whether ImageMagick reads `png` as a picture."""
    return subprocess.run(["identify", str(png)], capture_output=True).returncode == 0


def park_pointer(window, env):
    """Moves the mouse pointer off the viewer's window (into the screen's margin)."""
    width, _, height = window.partition("x")
    x, y = int(width) + POINTER_MARGIN // 2, int(height) + POINTER_MARGIN // 2
    done = subprocess.run(["xdotool", "mousemove", str(x), str(y)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise ScreenshotError(f"xdotool could not move the pointer: {done.stderr.strip()}")


def take_screenshot(rrd, rbl, png, step, steps, window, env, log):
    """Opens the recording and its blueprint in the Rerun viewer, places its time line at
    `step`, has it save a screenshot of its window, and closes it."""
    port = free_port()
    command = [
        sys.executable, "-m", "rerun_cli", "--renderer", "vulkan", "--bind", "127.0.0.1",
        "--port", str(port), "--window-size", window, "--hide-welcome-screen", str(rrd), str(rbl),
    ]
    viewer = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        client = connect(viewer, port)
        park_pointer(window, env)
        recording = loaded_recording(client, steps)
        asked(lambda: client.set_location(recording.location), "show the recording")
        asked(lambda: client.set_time("step", sequence=step, play_state="paused", recording=recording.store_id),
              f"place its time line at step {step}")
        request_screenshot(client, png)
    except ScreenshotError as error:
        raise ScreenshotError(f"{rrd}: {error} (the viewer's output: {log.name})") from error
    finally:
        viewer.terminate()
        try:
            viewer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            viewer.kill()
            viewer.wait()


def pixels(png):
    """The picture's pixels, rows × columns × RGB."""
    size = subprocess.run(["identify", "-format", "%w %h", str(png)], capture_output=True, text=True)
    rgb = subprocess.run(["convert", str(png), "-depth", "8", "rgb:-"], capture_output=True)
    if size.returncode != 0 or rgb.returncode != 0:
        raise ScreenshotError(f"ImageMagick could not read {png}")
    width, height = (int(n) for n in size.stdout.split())
    return np.frombuffer(rgb.stdout, dtype=np.uint8).reshape(height, width, 3).astype(int)


def rows_above_view(picture):
    """The rows of the empty strip the hidden top panel leaves above the 3D view, down to
    and with the one-pixel line under it (0 when there is no such line in the first 80
    rows): a row of one colour, brighter than the uniform row above it."""
    inner = picture[:, 4:-4]
    for row in range(1, min(80, len(inner))):
        line, above = inner[row], inner[row - 1]
        if np.ptp(above) == 0 and np.ptp(line[:, 0]) < 12 and line.mean() > above.mean() + 20:
            return row + 1
    return 0


def crop_and_shrink(raw, png, width):
    """Cuts the empty strip above the 3D view and scales the rest down to at most `width`
    pixels."""
    top = rows_above_view(pixels(raw))
    done = subprocess.run(
        ["convert", str(raw), "-gravity", "North", "-chop", f"0x{top}", "-resize", f"{width}x>",
         "-strip", "-define", "png:compression-level=9", str(png)],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise ScreenshotError(f"ImageMagick could not crop and shrink {raw}: {done.stderr.strip()}")


def force_share(png):
    """The share of the picture's pixels within 40 (per channel) of the force colour."""
    near = np.abs(pixels(png) - np.array(FORCE_COLOUR)).max(axis=2) <= 40
    return float(near.mean())


def screenshot_scenario(cb, rrb, scenario, args, env, repo):
    """One scenario: run, recording, blueprint, screenshot; returns what it measured."""
    out = args.out
    run_dir = out / "runs" / scenario
    shutil.rmtree(run_dir, ignore_errors=True)
    rrd, rbl = out / f"{scenario}.rrd", out / f"{scenario}.rbl"
    try:
        cb.write_run(str(repo / "scenarios" / f"{scenario}.yaml"), str(run_dir), solver=args.solver,
                     set=[f"simulation.duration={args.duration}"])
        written = cb.export_rerun(str(run_dir), str(rrd), force=True)
        trajectory = cb._native.run_trajectory(str(run_dir))
    except (cb.ContactbenchError, OSError) as error:
        raise ScreenshotError(f"{scenario}: {error}") from error
    step = step_of_largest_force(trajectory)
    eye, target = camera_for(world_points_at(trajectory, step, cb.viewer.FORCE_LENGTH))
    write_blueprint(rrb, rbl, scenario, eye, target)
    raw, png = out / f"{scenario}.raw.png", out / f"{scenario}.png"
    raw.unlink(missing_ok=True)
    start = time.monotonic()
    with open(out / "logs" / f"{scenario}.log", "w") as log:
        take_screenshot(rrd, rbl, raw, step, written["steps"], args.window, env, log)
    seconds = time.monotonic() - start
    crop_and_shrink(raw, png, args.width)
    raw.unlink()
    share = force_share(png)
    if share == 0.0:
        raise ScreenshotError(f"{png} shows no contact force (no orange pixel): look at it")
    return {"steps": written["steps"], "shown step": step,
            "sim_time": float(trajectory["time"][step]),
            "contacts": len(trajectory["contacts"][step]["points"]),
            "force pixels %": round(100.0 * share, 2), "viewer s": round(seconds, 1),
            "png bytes": png.stat().st_size}


def viewer_environment(home, display):
    """The viewer's environment: the virtual display, Mesa's software Vulkan driver, and a
    scratch home (its settings, analytics id and Mesa's shader cache stay inside --out)."""
    env = dict(os.environ, DISPLAY=display, HOME=str(home),
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_RUNTIME_DIR=str(home / "runtime"),
               VK_ICD_FILENAMES=str(lavapipe_manifest()), MESA_SHADER_CACHE_DISABLE="true")
    env.pop("WAYLAND_DISPLAY", None)
    (home / "runtime").mkdir(parents=True, mode=0o700, exist_ok=True)
    subprocess.run([sys.executable, "-m", "rerun_cli", "analytics", "disable"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return env


def main(argv=None):
    args = parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    cb, rrb = import_python_packages()
    ensure_system_tools(args.no_install)
    width, _, height = args.window.partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise ScreenshotError(f"--window {args.window}: expected WIDTHxHEIGHT, e.g. 1280x800")
    (args.out / "logs").mkdir(parents=True, exist_ok=True)
    home = args.out / ".viewer-home"
    with open(args.out / "logs" / "xvfb.log", "w") as xvfb_log:
        xvfb, display = start_virtual_display(int(width), int(height), xvfb_log)
        try:
            env = viewer_environment(home, display)
            for scenario in args.scenario or SCENARIOS:
                measured = screenshot_scenario(cb, rrb, scenario, args, env, repo)
                print(scenario, ", ".join(f"{k} {v}" for k, v in measured.items()))
        finally:
            xvfb.terminate()
            xvfb.wait(timeout=30)
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except ScreenshotError as error:
        print(f"viewer_screenshots: {error}", file=sys.stderr)
        sys.exit(1)
