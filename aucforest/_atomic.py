"""Writing files whole or not at all: every file aucforest writes goes through here.

:func:`atomic_output` yields a hidden temporary file
(``.aucforest-XXXXXXXX.tmp``) in the destination's folder; when the caller's
block completes, the file is flushed to disk and renamed over the destination
in one step (:func:`os.replace`). A write that fails (disk full, a file-size
limit) or is interrupted (Ctrl-C, SIGTERM, SIGHUP) removes the temporary file
and leaves the previous file at the destination as it was; readers see the
old file or the new one, never a part. Only SIGKILL or a crash of the machine
can leave the temporary file behind, the destination still intact.

Model files (:func:`aucforest.io.save`), predictions, per-fold scores and
plots of the command line are all written this way.

Destinations
------------
* A regular file is replaced; the new file keeps its permissions (and owner,
  where allowed). Other hard links to it keep the old content.
* A symbolic link is followed: its final target is replaced, the link kept
  (a dangling link creates its target).
* A folder, FIFO (named pipe), character or block device or socket is
  refused with a ValueError naming the path, before anything is written:
  replacing ``/dev/null`` or a pipe with a regular file would destroy it.

Signals: while a write is in progress in the main thread, SIGTERM and SIGHUP
(when they have their default action, which kills the process without any
cleanup) get a handler that removes the temporary files of every write in
progress and then ends the process with the same signal; the previous
handlers are restored afterwards. The handler does its work itself rather
than raising an exception, so a signal that arrives at any point of a write,
even after the rename while the handlers are being restored, ends the process
by that signal. Writes in other threads register their temporary files too,
but only the main thread installs the handler; signals with a handler of
their own are left alone.
"""
import contextlib
import os
import secrets
import signal
import stat
import threading

TEMPORARY_PREFIX = ".aucforest-"
TEMPORARY_SUFFIX = ".tmp"
# terminating signals whose default action would leave the temporary file behind
_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def output_target(path, what="output file"):
    """The file a write to ``path`` replaces: ``path`` itself, or for a
    symbolic link its final target (absolute).

    Raises
    ------
    ValueError
        If the destination exists and is not a regular file (folder, FIFO,
        device, socket); the message names ``path``.
    OSError
        If a link cannot be resolved (e.g. a loop of links).
    """
    path = os.fspath(path)
    target = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as error:
        raise OSError(error.errno, f"cannot write the {what}: {error.strerror}", path) from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        via = "" if target == os.path.abspath(path) else f" (the link's target {target})"
        raise ValueError(f"cannot write the {what} {path}: it is {kind}{via}, not a regular "
                         "file; aucforest writes only regular files (replacing it would "
                         "destroy it)")
    return target


@contextlib.contextmanager
def atomic_output(path, mode="wb", *, what="output file", **open_options):
    """Write the file ``path`` whole or not at all (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        Destination; a symbolic link is written through to its target.
    mode : str, default="wb"
        Mode of the temporary file, as for :func:`open` ("w" text, "wb"
        binary, "w+b" to read back what was written).
    what : str, default="output file"
        What the file is, for messages ("model file", "plot", ...).
    **open_options
        ``encoding``, ``newline``, ... for text modes.

    Yields
    ------
    file object
        The temporary file; write the content to it.

    Raises
    ------
    ValueError
        If ``path`` is a folder, FIFO, device or socket.
    OSError
        If the file cannot be written (folder missing or not writable, disk
        full, ...); it names ``path``, never the temporary file.
    """
    target = output_target(path, what)
    folder = os.path.dirname(target)
    with _termination_removes_temporaries(), contextlib.ExitStack() as cleanup:
        try:
            descriptor, temporary = _create_temporary(folder)
        except OSError as error:
            raise _naming(error, path, what) from error
        cleanup.callback(_IN_PROGRESS.discard, temporary)
        cleanup.callback(_remove, temporary)  # until the rename succeeds
        try:
            stream = os.fdopen(descriptor, mode, **open_options)
        except BaseException:
            os.close(descriptor)
            raise
        try:
            with stream:
                _keep_permissions(stream.fileno(), target)
                yield stream
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except OSError as error:
            raise _naming(error, path, what) from error
        cleanup.pop_all()
        _IN_PROGRESS.discard(temporary)
        _sync_folder(folder)


def save_figure(figure, path):
    """Save a matplotlib ``figure`` to ``path`` with :func:`atomic_output`, in
    the format of the path's extension (:func:`figure_format`)."""
    file_format = figure_format(path)
    with atomic_output(path, "wb", what="plot") as stream:
        figure.savefig(stream, format=file_format)


def figure_format(path):
    """The image format of a plot file: its extension ("png", "pdf", "svg",
    ...), PNG when it has none. ValueError naming the supported formats when
    matplotlib cannot write it."""
    from matplotlib.backend_bases import FigureCanvasBase

    extension = os.path.splitext(os.fspath(path))[1][1:].lower()
    supported = FigureCanvasBase.get_supported_filetypes()
    if not extension:
        return "png"
    if extension not in supported:
        raise ValueError(f"cannot write the plot {os.fspath(path)}: unknown image format "
                         f"{extension!r}; use one of {', '.join(sorted(supported))}")
    return extension


# Temporary files of the writes in progress (all threads), which the handler of
# `_termination_removes_temporaries` removes before the process ends. A name
# is registered before its file is created, so no file escapes it; a name
# registered but not created is harmless (removing it finds nothing).
_IN_PROGRESS = set()


def _remove_temporaries_and_end(signum, frame):
    """Handler of SIGTERM and SIGHUP during a write: remove the temporary files,
    then end the process by the same signal with its default action."""
    for temporary in list(_IN_PROGRESS):
        try:
            os.remove(temporary)
        except OSError:
            pass  # not created yet, already renamed, or already removed
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)


@contextlib.contextmanager
def _termination_removes_temporaries():
    """Within the block, SIGTERM and SIGHUP remove the temporary files and end
    the process by the same signal. Only in the main thread, and only for
    signals with their default action; the previous handlers are restored."""
    borrowed = []
    if threading.current_thread() is threading.main_thread():
        for signum in _TERMINATING:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _remove_temporaries_and_end)
                borrowed.append(signum)
    try:
        yield
    finally:
        for signum in borrowed:
            signal.signal(signum, signal.SIG_DFL)


def _create_temporary(folder):
    """A new file in ``folder`` with a short hidden name (fits beside any name
    the folder allows), created with the permissions ``open()`` would give."""
    while True:
        temporary = os.path.join(folder, f"{TEMPORARY_PREFIX}{secrets.token_hex(4)}"
                                         f"{TEMPORARY_SUFFIX}")
        _IN_PROGRESS.add(temporary)  # before the file exists: a signal cannot miss it
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            return os.open(temporary, flags, 0o666), temporary
        except BaseException as error:
            _IN_PROGRESS.discard(temporary)  # not ours: another write's file
            if not isinstance(error, FileExistsError):
                raise


def _remove(temporary):
    try:
        os.remove(temporary)
    except FileNotFoundError:
        pass


def _keep_permissions(descriptor, path):
    """Give the new file the mode (and owner, where allowed) of the file it replaces."""
    try:
        replaced = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(replaced.st_mode):
        return
    if hasattr(os, "fchown"):
        try:
            os.fchown(descriptor, replaced.st_uid, replaced.st_gid)
        except OSError:
            pass  # only root may give a file away; the file stays ours
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, stat.S_IMODE(replaced.st_mode))
    else:
        os.chmod(path, stat.S_IMODE(replaced.st_mode))  # pragma: no cover (Windows)


def _naming(error, path, what):
    """The same kind of OSError, naming the user's path instead of the temporary file."""
    path = os.fspath(path)
    if error.errno is None:
        return OSError(f"cannot write the {what} {path}: {error}")
    return OSError(error.errno, f"cannot write the {what}: {error.strerror}", path)


def _sync_folder(folder):
    """Make the rename durable where the platform allows it (POSIX)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
