// duckdb_query.mjs - the DuckDB side of tests/bench/query.sh: runs one SQL
// statement over a CSV export of a profile (`prof export --format csv`,
// formats/export-csv.md) and prints how many rows it gave.
//
// usage: node duckdb_query.mjs [--load] CSV SQL
//
// The SQL reads the CSV as the view `events`, over read_csv_auto, so that
// the whole process is what someone querying the CSV with DuckDB waits
// for: the CSV is parsed by every statement. With --load the CSV is first
// copied into an in-memory table `events`, and the script prints the load
// and the statement's own time apart ("rows N load_s S query_s S"), so that
// the benchmark can say what DuckDB costs once the CSV is parsed.
//
// DuckDB is not a dependency of prof: the benchmark installs @duckdb/node-api
// into a cache under the build directory (BENCH_NODE_MODULES, by default
// build/bench-node/node_modules beside this checkout), and this script loads
// it from there, not from a node_modules that Node would look up.
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const load = args[0] === "--load";
if (load) args.shift();
if (args.length !== 2) {
    process.stderr.write("usage: node duckdb_query.mjs [--load] CSV SQL\n");
    process.exit(2);
}
const [csv, sql] = args;

const modules =
    process.env.BENCH_NODE_MODULES ||
    resolve(fileURLToPath(new URL(".", import.meta.url)), "../../build/bench-node/node_modules");
// createRequire wants a file inside the directory whose node_modules it
// searches; the file itself need not exist.
const require = createRequire(resolve(modules, "..", "package.json"));
const { DuckDBInstance } = require("@duckdb/node-api");

const quoted = "'" + csv.replaceAll("'", "''") + "'";
const instance = await DuckDBInstance.create(":memory:");
const con = await instance.connect();
let loadS = 0;
if (load) {
    const t0 = process.hrtime.bigint();
    await con.run(`CREATE TABLE events AS SELECT * FROM read_csv_auto(${quoted})`);
    loadS = Number(process.hrtime.bigint() - t0) / 1e9;
} else {
    await con.run(`CREATE VIEW events AS SELECT * FROM read_csv_auto(${quoted})`);
}
const t0 = process.hrtime.bigint();
const reader = await con.runAndReadAll(sql);
const queryS = Number(process.hrtime.bigint() - t0) / 1e9;
const rows = reader.currentRowCount;
if (load)
    process.stdout.write(`rows ${rows} load_s ${loadS.toFixed(3)} query_s ${queryS.toFixed(3)}\n`);
else
    process.stdout.write(`rows ${rows}\n`);
con.disconnectSync();
