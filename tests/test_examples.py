#!/usr/bin/python3
"""Runs the examples of examples/ as their users would, so they never rot:
each must succeed (the Python and C ones check their own answers against
SQLite and exit 1 if one differs) and print exactly its .expected file.

    /usr/bin/python3 tests/test_examples.py ./parallel.so

  analytics   /usr/bin/python3 examples/analytics.py EXT
  report      examples/report.c built with gcc -Wall -Wextra -Werror
              against the system's SQLite, then run with EXT
  session     sqlite3 DB < examples/session.sql, in a directory where
              ./parallel.so is EXT (the script says .load ./parallel)

After a deliberate change of an example's output, regenerate its expected
file with EXAMPLES_UPDATE=1 (and read the diff before committing it).
The last line is "examples: N passed, N failed".
"""
import difflib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
UPDATE = os.environ.get("EXAMPLES_UPDATE") == "1"


def run(args, **kw):
    """args' exit status and output (stdout, then stderr)."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, **kw)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def expect_output(name, rc, out, err):
    """The example exited 0, said nothing on stderr, and printed exactly
    examples/NAME.expected."""
    assert rc == 0, "%s exited with status %d:\n%s%s" % (name, rc, out[-3000:], err[-3000:])
    assert err == "", "%s wrote to stderr:\n%s" % (name, err[-3000:])
    path = os.path.join(EXAMPLES, name + ".expected")
    if UPDATE:
        with open(path, "w") as f:
            f.write(out)
    with open(path) as f:
        want = f.read()
    if out != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), out.splitlines(True),
                                            path, "what %s printed" % name))
        raise AssertionError("%s's output is not %s:\n%s" % (name, path, diff[-4000:]))


def test_analytics_py():
    rc, out, err = run(["/usr/bin/python3", os.path.join(EXAMPLES, "analytics.py"), EXT])
    expect_output("analytics", rc, out, err)


def test_report_c():
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "report")
        rc, out, err = run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
                            "-D_GNU_SOURCE", "-o", exe, os.path.join(EXAMPLES, "report.c"),
                            "-lsqlite3"])
        assert rc == 0, "report.c does not build:\n%s%s" % (out, err)
        # Its own temporary database, then one given on the command line.
        rc, out, err = run([exe, EXT])
        expect_output("report", rc, out, err)
        rc, out2, err = run([exe, EXT, os.path.join(tmp, "orders.db")])
        assert rc == 0 and out2 == out and err == "", (rc, out2, err)


def test_session_sql():
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(EXT, os.path.join(tmp, "parallel.so"))
        db = os.path.join(tmp, "readings.db")
        with open(os.path.join(EXAMPLES, "session.sql")) as f:
            script = f.read()
        for _ in range(2):          # a second time over its own earlier table
            rc, out, err = run(["sqlite3", "-bail", db], input=script.encode(), cwd=tmp)
            expect_output("session", rc, out, err)


def main():
    return harness.run("examples", globals())


if __name__ == "__main__":
    sys.exit(main())
