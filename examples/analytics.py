#!/usr/bin/python3
"""analytics.py: an analytics script over one SQLite file with the
extension, using nothing but Python's own sqlite3 module.

    /usr/bin/python3 examples/analytics.py [./parallel.so]

It makes its own data (200,000 payments of 500 accounts in a database
file in a temporary directory, a fraction of a second), then prints a
GROUP BY report, a histogram, a median, and three reports with window
functions: a running balance, a moving average, the top 3 per group.
Every answer is checked against the same query run natively by SQLite; the
script exits with status 1 if one differs.  (Debian's /usr/bin/python3
can load extensions; some other builds of Python cannot.)
"""
import os
import sqlite3
import sys
import tempfile

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
ROWS = 200000           # twice par_config('min_rows'): the views run in parallel

failures = 0


def connect(path):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)     # no SQL may load libraries from here on
    return conn


def make_data(conn):
    """payments(id, account, day, kind, amount): deterministic, cents."""
    conn.execute("PRAGMA journal_mode = WAL")  # worker connections read files in parallel
    conn.execute("CREATE TABLE payments(id INTEGER PRIMARY KEY, account INT, day INT,"
                 " kind TEXT, amount INT)")
    conn.execute("""
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
        INSERT INTO payments
        SELECT i, (i * 7919) % 500, 1 + i / 2000,
               CASE i % 4 WHEN 0 THEN 'card' WHEN 1 THEN 'transfer'
                          WHEN 2 THEN 'cash' ELSE 'refund' END,
               CASE i % 4 WHEN 3 THEN -((i * 31) % 5000)
                          ELSE ((i * 104729) % 1009) * (1 + (i * 7919) % 23) END
          FROM s""", (ROWS,))


def parallel_view(conn, name, select):
    """A parallel view of select: temp.name (made again if it exists),
    scanned like any table.  The SELECT is a bound value: no quoting."""
    conn.execute("SELECT par_view(?, ?)", (name, select))


def check(title, got, want, ordered=False):
    """got (the extension's rows) must be want (SQLite's), exactly: as
    lists when the order is part of the answer, else as multisets."""
    global failures
    if not ordered:
        got, want = sorted(got, key=repr), sorted(want, key=repr)
    if got == want:
        print("  %s: the same as native SQLite (%d rows)" % (title, len(got)))
    else:
        failures += 1
        print("  %s: DIFFERS from native SQLite\n    got  %r\n    want %r"
              % (title, got[:5], want[:5]))


def show(header, rows):
    print("  " + " | ".join(header))
    for r in rows:
        print("  " + " | ".join("" if v is None else str(v) for v in r))


def report(conn):
    """A GROUP BY report through a parallel view."""
    print("Payments per kind:")
    select = ("SELECT kind, count(*) AS n, sum(amount) AS cents, avg(amount) AS mean,"
              " min(amount) AS lo, max(amount) AS hi FROM payments GROUP BY kind")
    parallel_view(conn, "by_kind", select)
    rows = conn.execute("SELECT * FROM by_kind ORDER BY kind").fetchall()
    show(["kind", "n", "cents", "mean", "lo", "hi"], rows)
    check("report", rows, conn.execute(select + " ORDER BY kind").fetchall(), ordered=True)

    # The same with a filter: the WHERE runs inside the view's reads, and
    # :min_cents is a parameter, bound at each scan: big_payers(15000).
    select = ("SELECT account, count(*) AS n, sum(amount) AS cents FROM payments"
              " WHERE amount > :min_cents GROUP BY account")
    parallel_view(conn, "big_payers", select)
    rows = conn.execute("SELECT * FROM big_payers(15000) ORDER BY cents DESC, account LIMIT 3"
                        ).fetchall()
    print("Accounts with the most in payments over $150:")
    show(["account", "n", "cents"], rows)
    for cents in (15000, 0):
        check("filtered report (over %d cents)" % cents,
              conn.execute("SELECT * FROM big_payers(?)", (cents,)).fetchall(),
              conn.execute(select, {"min_cents": cents}).fetchall())


def histogram(conn):
    """Ten bins of $20 over [0, 20000] cents: natively a GROUP BY over
    amount / 2000, where the last bin also holds 20000 (it is closed);
    negative amounts (refunds) are 'under', those above 20000 'over'."""
    print("Histogram of amounts (par_histogram):")
    rows = conn.execute("SELECT bin, lo, hi, count, kind FROM par_histogram("
                        "'payments', 'amount', 10, 0, 20000)").fetchall()
    show(["bin", "lo", "hi", "count", "kind"], rows)
    got = [(kind if b is None else b, n) for b, lo, hi, n, kind in rows]
    want = conn.execute("""
        SELECT CASE WHEN amount < 0 THEN 'under' WHEN amount > 20000 THEN 'over'
                    ELSE min(amount / 2000, 9) END AS bin, count(*)
          FROM payments GROUP BY 1
         ORDER BY CASE bin WHEN 'under' THEN -1 WHEN 'over' THEN 10 ELSE bin END""").fetchall()
    check("histogram", got, want, ordered=True)


def median(conn):
    """par_median against the middle of ORDER BY: for an even count, the
    point halfway between the two middle values, as par_median (and
    SQLite's percentile.c) interpolate."""
    print("Median payment per kind (par_median):")
    rows = conn.execute("SELECT kind, par_median(amount) FROM payments GROUP BY kind"
                        " ORDER BY kind").fetchall()
    show(["kind", "median"], rows)
    want = []
    for kind, n in conn.execute("SELECT kind, count(amount) FROM payments GROUP BY kind"
                                " ORDER BY kind").fetchall():
        a, b = conn.execute("SELECT min(x), max(x) FROM (SELECT CAST(amount AS REAL) AS x"
                            " FROM payments WHERE kind = ? AND amount IS NOT NULL"
                            " ORDER BY amount LIMIT 2 - ? % 2 OFFSET (? - 1) / 2)",
                            (kind, n, n)).fetchone()
        want.append((kind, a + (b - a) * 0.5))
    check("median", rows, want, ordered=True)


def running_balance(conn):
    """A running balance per account: a window sum.  (day, id) orders each
    account's payments completely, so the default frame (every row up to
    the current one and its peers) is one payment at a time."""
    print("Running balance of account 7, last 3 payments (a window sum):")
    select = ("SELECT account, day, id, amount, sum(amount) OVER (PARTITION BY account"
              " ORDER BY day, id) AS balance FROM payments")
    parallel_view(conn, "balances", select)
    rows = conn.execute("SELECT day, id, amount, balance FROM balances WHERE account = 7"
                        " ORDER BY day DESC, id DESC LIMIT 3").fetchall()
    show(["day", "id", "amount", "balance"], rows)
    # In SQLite's own order: by account, then day and id.
    check("running balance", conn.execute("SELECT * FROM balances").fetchall(),
          conn.execute(select).fetchall(), ordered=True)


def moving_average(conn):
    """A 7-day moving average of the daily totals (of the 100 whole days):
    each day's mean over itself and the 6 days before it (fewer at the
    start)."""
    print("Daily totals and their 7-day moving average, last 3 days:")
    conn.execute("DROP TABLE IF EXISTS daily")
    conn.execute("CREATE TABLE daily(d INTEGER PRIMARY KEY, x INT)")
    conn.execute("INSERT INTO daily SELECT day, sum(amount) FROM payments WHERE day <= 100 GROUP BY day")
    select = ("SELECT d, x, avg(x) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)"
              " AS week FROM daily")
    parallel_view(conn, "weekly", select)
    rows = conn.execute("SELECT d, x, round(week, 2) FROM weekly ORDER BY d DESC LIMIT 3").fetchall()
    show(["day", "total", "7-day mean"], rows)
    check("moving average", conn.execute("SELECT * FROM weekly").fetchall(),
          conn.execute(select).fetchall(), ordered=True)


def top_per_kind(conn):
    """The 3 largest payments of each kind: row_number() numbers each
    kind's payments from the largest (ties by id), and the outer SELECT
    keeps the first 3.  (A SELECT from a subquery runs natively inside the
    view for now; the rows are the same either way.)"""
    print("The 3 largest payments of each kind (row_number):")
    select = ("SELECT kind, rn, id, account, amount FROM ("
              "SELECT kind, id, account, amount,"
              " row_number() OVER (PARTITION BY kind ORDER BY amount DESC, id) AS rn"
              " FROM payments) WHERE rn <= 3")
    parallel_view(conn, "top3", select)
    rows = conn.execute("SELECT * FROM top3 ORDER BY kind, rn").fetchall()
    show(["kind", "rank", "id", "account", "amount"], rows)
    check("top 3 per kind", rows, conn.execute(select + " ORDER BY kind, rn").fetchall(), ordered=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(os.path.join(tmp, "payments.db"))
        make_data(conn)
        report(conn)
        histogram(conn)
        median(conn)
        running_balance(conn)
        moving_average(conn)
        top_per_kind(conn)
        conn.close()
    print("analytics: %s" % ("every answer agrees with SQLite" if failures == 0
                             else "%d answers differ" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
