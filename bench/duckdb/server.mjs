// server.mjs: DuckDB for bench/bench.py, one long-lived process that loads the
// benchmark's tables once and then answers requests, so that each query's
// systems (SQLite, parallel views, DuckDB) run one after another.
//
//   node bench/duckdb/server.mjs      (started by bench.py; installed by make bench-duckdb)
//
// Requests come on stdin, one JSON object a line; each gets one JSON line on
// stdout:
//   {"op": "load", "table": "fact", "csv": PATH, "columns": [["id", "BIGINT"], ...]}
//       -> {"ms": load time}            the table in DuckDB's own memory
//   {"op": "threads", "n": 2}           -> {"threads": 2}
//   {"op": "describe", "sql": SELECT}   -> {"types": ["BIGINT", "VARCHAR", ...]}
//   {"op": "query", "sql": SELECT}      -> {"ms": time, "rows": [[...], ...]}
//   failure of any of them              -> {"error": message}
// "ms" of a query covers running it and reading every result row into
// JavaScript values.  Integers leave as JSON numbers (as strings beyond 2^53).
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance } from '@duckdb/node-api';

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();

function quoteIdent(name) {
  return '"' + name.replaceAll('"', '""') + '"';
}

function quoteString(text) {
  return "'" + text.replaceAll("'", "''") + "'";
}

async function load(req) {
  const columns = req.columns
    .map(([name, type]) => `${quoteString(name)}: ${quoteString(type)}`)
    .join(', ');
  const t0 = performance.now();
  await conn.run(`CREATE OR REPLACE TABLE ${quoteIdent(req.table)} AS
    SELECT * FROM read_csv(${quoteString(req.csv)}, header = false, delim = ',',
      quote = '"', escape = '"', columns = {${columns}})`);
  return { ms: performance.now() - t0 };
}

async function handle(req) {
  switch (req.op) {
    case 'load':
      return load(req);
    case 'threads':
      await conn.run(`SET threads = ${Number(req.n)}`);
      return { threads: Number(req.n) };
    case 'describe': {
      const reader = await conn.runAndReadAll(`DESCRIBE ${req.sql}`);
      return { types: reader.getRowsJS().map((row) => row[1]) };
    }
    case 'query': {
      const t0 = performance.now();
      const reader = await conn.runAndReadAll(req.sql);
      const rows = reader.getRowsJS();
      return { ms: performance.now() - t0, rows };
    }
    default:
      throw new Error(`unknown op ${req.op}`);
  }
}

function toJson(value) {
  return JSON.stringify(value, (_, v) =>
    typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v);
}

// Requests are handled strictly one after another, in the order they come.
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = await handle(JSON.parse(line));
  } catch (e) {
    answer = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(toJson(answer) + '\n');
}
