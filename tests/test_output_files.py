"""Every file aucforest writes is written whole or not at all (issue 30).

Model files, predictions, per-fold scores and plots go to a temporary file
beside the destination and replace it only once complete
(`aucforest._atomic`). Checked on real files: FIFOs and device nodes, symbolic
links, a file-size limit (RLIMIT_FSIZE) that makes a write fail half way, and
SIGTERM / SIGINT sent to a real process in the middle of a save.
"""
import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import aucforest
from aucforest import io as model_io
from aucforest._atomic import atomic_output
from aucforest.cli import main
from package_env import package_env
from cli_files import run_main, write_csv

needs_posix = pytest.mark.skipif(os.name != "posix", reason="FIFOs, links and rlimits of POSIX")
PREVIOUS = b"the user's previous file\n" * 400


def temporaries(folder):
    return [name for name in os.listdir(folder) if name.startswith(".aucforest-")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A training CSV (400 rows) and a model fitted on it by the command line."""
    folder = tmp_path_factory.mktemp("outputs")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    label = np.where(X[:, 0] + rng.normal(size=400) > 0.5, "yes", "no")
    write_csv(folder / "data.csv", ["id", "a", "b", "c", "label"],
              [[i, *np.round(x, 3), lab] for i, (x, lab) in enumerate(zip(X, label))])
    assert main(["fit", str(folder / "data.csv"), "--target", "label", "--id", "id",
                 "--output", str(folder / "model.npz"), "--n-estimators", "10", "--seed", "0",
                 "--quiet"]) == 0
    return folder


# ------------------------------------------------------------ outputs that are not files

def special_files(folder):
    """A FIFO, a folder and (as root) a character device like /dev/null, in ``folder``."""
    os.mkfifo(folder / "fifo")
    (folder / "dir").mkdir()
    made = {"fifo": "a FIFO (named pipe)", "dir": "a folder"}
    if os.geteuid() == 0:
        os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        made["null"] = "a character device"
    return made


def assert_unchanged(folder, made):
    assert stat.S_ISFIFO(os.lstat(folder / "fifo").st_mode)
    assert stat.S_ISDIR(os.lstat(folder / "dir").st_mode) and not os.listdir(folder / "dir")
    if "null" in made:
        assert stat.S_ISCHR(os.lstat(folder / "null").st_mode)
    assert temporaries(folder) == []


@needs_posix
def test_save_refuses_fifos_devices_and_folders(tmp_path):
    forest = aucforest.AUCForestClassifier(3, random_state=0).fit(np.eye(10), np.arange(10) % 2)
    made = special_files(tmp_path)
    for name, kind in made.items():
        with pytest.raises(ValueError, match=re.escape(f"{tmp_path / name}: it is {kind}, not "
                                                       "a regular file")):
            model_io.save(forest, tmp_path / name)
    os.symlink(tmp_path / "fifo", tmp_path / "link-to-fifo")
    with pytest.raises(ValueError, match=f"link-to-fifo: it is a FIFO .*link's target "
                                         f"{tmp_path / 'fifo'}"):
        model_io.save(forest, tmp_path / "link-to-fifo")
    assert_unchanged(tmp_path, made)


@needs_posix
def test_every_cli_output_refuses_fifos_devices_and_folders(capsys, tmp_path, folder):
    made = special_files(tmp_path)
    data, model = folder / "data.csv", folder / "model.npz"
    for name in made:
        out = tmp_path / name
        for args in (["fit", data, "--target", "label", "--output", out, "--n-estimators", 2],
                     ["predict", model, data, "--output", out],
                     ["evaluate", model, data, "--target", "label", "--plot", out],
                     ["importance", model, data, "--target", "label", "--plot", out],
                     ["compare", data, "--target", "label", "--folds-csv", out],
                     ["compare", data, "--target", "label", "--plot", out]):
            started = time.perf_counter()
            code, stdout, err = run_main(capsys, *args, "--quiet")
            assert code == 1 and stdout == "", (args, err)
            assert str(out) in err and ("is a folder" in err or "not a regular file" in err), err
            assert time.perf_counter() - started < 5  # refused before the work
    assert_unchanged(tmp_path, made)


def test_predict_dash_writes_to_stdout(capsys, folder):
    code, out, err = run_main(capsys, "predict", folder / "model.npz", folder / "data.csv",
                              "--output", "-")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "id,label" and len(out.splitlines()) == 401
    assert not os.path.exists("-")


# ------------------------------------------------------------ symbolic links

@needs_posix
def test_outputs_through_symbolic_links_replace_the_target_and_keep_the_link(
        capsys, tmp_path, folder):
    data, model = folder / "data.csv", folder / "model.npz"
    (tmp_path / "real").mkdir()
    for name in ("model.npz", "predictions.csv", "roc.png", "saved.npz"):
        (tmp_path / "real" / name).write_bytes(PREVIOUS)
        os.symlink(tmp_path / "real" / name, tmp_path / name)
    assert run_main(capsys, "fit", data, "--target", "label", "--output", tmp_path / "model.npz",
                    "--n-estimators", 3, "--quiet")[0] == 0
    assert run_main(capsys, "predict", model, data, "--output",
                    tmp_path / "predictions.csv")[0] == 0
    pytest.importorskip("matplotlib")
    assert run_main(capsys, "evaluate", model, data, "--target", "label", "--plot",
                    tmp_path / "roc.png")[0] == 0
    aucforest.save(aucforest.load(model), tmp_path / "saved.npz")
    for name in ("model.npz", "predictions.csv", "roc.png", "saved.npz"):
        assert os.path.islink(tmp_path / name), name
        assert os.readlink(tmp_path / name) == str(tmp_path / "real" / name)
        assert (tmp_path / "real" / name).read_bytes() != PREVIOUS, name
    assert len(aucforest.load(tmp_path / "real" / "model.npz").estimators_) == 3
    assert (tmp_path / "real" / "predictions.csv").read_text().startswith("id,label\n0,")
    assert (tmp_path / "real" / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert temporaries(tmp_path) == temporaries(tmp_path / "real") == []


# ------------------------------------------------------------ writes that fail half way

LIMITED_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from aucforest.cli import main

    limit = int(sys.argv[1])  # Python ignores SIGXFSZ: a write beyond it fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    print(json.dumps([main(args) for args in json.loads(sys.argv[2])]))
""")


@needs_posix
def test_a_write_that_fails_half_way_keeps_the_previous_file(capsys, tmp_path, folder):
    """Under a file-size limit smaller than each output, every write fails with
    EFBIG after its first bytes: the previous files must survive whole."""
    pytest.importorskip("matplotlib")
    data, model = folder / "data.csv", folder / "model.npz"
    targets = [tmp_path / "model.npz", tmp_path / "out.csv", tmp_path / "roc.png"]
    commands = [["fit", data, "--target", "label", "--output", targets[0], "--n-estimators", 20],
                ["predict", model, data, "--proba", "--output", targets[1]],
                ["evaluate", model, data, "--target", "label", "--plot", targets[2]]]
    for target in targets:
        target.write_bytes(PREVIOUS)
    limit = 3000  # bytes: each output is larger
    result = subprocess.run(
        [sys.executable, "-c", LIMITED_SCRIPT, str(limit),
         json.dumps([[*map(str, args), "--quiet"] for args in commands])],
        cwd=tmp_path, env=package_env(), capture_output=True, text=True, timeout=300)
    assert json.loads(result.stdout.splitlines()[-1]) == [1, 1, 1], result.stderr
    errors = [line for line in result.stderr.splitlines() if "aucforest: error" in line]
    for error, target, what in zip(errors, targets, ["model file", "CSV file", "plot"]):
        assert error == f"aucforest: error: cannot write the {what}: File too large: {target}"
    for target in targets:
        assert target.read_bytes() == PREVIOUS, target
    assert temporaries(tmp_path) == []
    for args, target in zip(commands, targets):  # without the limit: replaced
        assert run_main(capsys, *args, "--quiet")[0] == 0
        assert os.path.getsize(target) > limit


def test_plot_format_follows_the_extension_and_unknown_ones_fail_first(capsys, tmp_path, folder):
    pytest.importorskip("matplotlib")
    model, data = folder / "model.npz", folder / "data.csv"
    for name, magic in (("roc", b"\x89PNG"), ("roc.pdf", b"%PDF"), ("roc.SVG", b"<?xml")):
        code, out, err = run_main(capsys, "evaluate", model, data, "--target", "label",
                                  "--plot", tmp_path / name)
        assert code == 0, err
        assert (tmp_path / name).read_bytes()[:len(magic)] == magic  # exactly this path
        assert f"ROC curves saved to {tmp_path / name}" in out
    code, out, err = run_main(capsys, "evaluate", model, data, "--target", "label",
                              "--plot", tmp_path / "roc.jpgg")
    assert code == 1 and out == "" and "unknown image format 'jpgg'; use one of" in err
    assert sorted(os.listdir(tmp_path)) == ["roc", "roc.SVG", "roc.pdf"]


# ------------------------------------------------------------ signals during a save

# The child pauses at one moment of a real save and says so; the parent then
# sends the signal. "written": the model is in the temporary file, not yet
# renamed; "renamed": the new file is in place, the write's signal handling not
# yet undone (the last moment at which aucforest's handler is the one that runs).
SAVE_SCRIPT = textwrap.dedent("""
    import signal, sys, time
    import numpy as np
    import aucforest
    from aucforest import _atomic
    from aucforest.io import _write

    # the dispositions of an interactive Python, whatever this process inherited
    # (a background job of a shell starts with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    path, moment = sys.argv[1], sys.argv[2]

    def pause(original):
        def paused(*args):
            original(*args)
            print(moment, flush=True)
            time.sleep(120)
        return paused

    if moment == "written":
        _write._write_loadable = pause(_write._write_loadable)
    else:
        _atomic._sync_folder = pause(_atomic._sync_folder)
    X, y = np.eye(12), np.arange(12) % 2
    forest = aucforest.AUCForestClassifier(4, random_state=1, n_jobs=1).fit(X, y)
    aucforest.save(forest, path)
    print("saved", flush=True)
""")


@needs_posix
@pytest.mark.parametrize("moment", ["written", "renamed"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_save_leaves_one_whole_file_and_no_temporary(tmp_path, signum, moment):
    """Before the rename the old file stays; after it the new one is whole. Either
    way no temporary file is left, and SIGTERM ends the process as it would
    without aucforest (by the signal, not by an exception)."""
    path = tmp_path / "model.npz"
    old = aucforest.AUCForestClassifier(3, random_state=0).fit(np.eye(10), np.arange(10) % 2)
    aucforest.save(old, path)
    before = path.read_bytes()
    child = subprocess.Popen([sys.executable, "-c", SAVE_SCRIPT, str(path), moment],
                             cwd=tmp_path, env=package_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == f"{moment}\n"
        assert (len(temporaries(tmp_path)) == 1) == (moment == "written")
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert "saved" not in out
    if signum == signal.SIGTERM:
        assert child.returncode == -signal.SIGTERM, err  # ended by the signal
    else:
        assert child.returncode != 0 and "KeyboardInterrupt" in err
    assert temporaries(tmp_path) == []
    loaded = aucforest.load(path)
    if moment == "written":
        assert path.read_bytes() == before
        np.testing.assert_array_equal(loaded.predict_proba(np.eye(10)),
                                      old.predict_proba(np.eye(10)))
    else:
        assert loaded.n_features_in_ == 12 and len(loaded.estimators_) == 4  # the new model


def test_signal_handlers_are_only_borrowed_during_a_write(tmp_path):
    def own_handler(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with atomic_output(tmp_path / "a.bin") as stream:
            assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL  # cleans up, then ends
            stream.write(b"a")
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        signal.signal(signal.SIGTERM, own_handler)
        with atomic_output(tmp_path / "b.bin") as stream:
            assert signal.getsignal(signal.SIGTERM) is own_handler  # the user's: left alone
            stream.write(b"b")
        assert signal.getsignal(signal.SIGTERM) is own_handler
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (tmp_path / "a.bin").read_bytes() == b"a" and (tmp_path / "b.bin").read_bytes() == b"b"


def test_writes_from_other_threads_leave_signals_alone(tmp_path):
    seen = []

    def write():
        with atomic_output(tmp_path / "t.bin") as stream:
            seen.append(signal.getsignal(signal.SIGTERM))
            stream.write(b"t")

    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [signal.SIG_DFL] and (tmp_path / "t.bin").read_bytes() == b"t"
    assert temporaries(tmp_path) == []


def test_an_error_inside_the_write_removes_the_temporary(tmp_path):
    (tmp_path / "kept.csv").write_bytes(PREVIOUS)
    with pytest.raises(RuntimeError, match="half way"):
        with atomic_output(tmp_path / "kept.csv", "w", encoding="utf-8") as stream:
            stream.write("partial")
            raise RuntimeError("half way")
    assert (tmp_path / "kept.csv").read_bytes() == PREVIOUS
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("command", ["fit", "predict", "evaluate", "compare", "importance"])
def test_help_of_every_writing_command_says_how_outputs_are_written(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Output files are replaced only once complete" in text
    assert "A symbolic link is written through to its target (the link is kept); a folder, " \
           "FIFO or device is refused before any work." in text
