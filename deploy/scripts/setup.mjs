#!/usr/bin/env node
// Setup for `npm start` and `npm test` (plain JS: it runs before any dependency is installed).
//   1. Node >= 20.19.
//   2. `npm ci` when node_modules is missing or older than package-lock.json.
//   3. Build every package (turbo; cached, so a second run is quick).
//   4. nats-server on PATH: installed with apt-get when root on Debian/Ubuntu, else a clear message.
//   5. With --browser: Chromium for the browser tests, the same way.
//   6. With --prometheus: promtool (Debian `prometheus`) and Alertmanager (`prometheus-alertmanager`),
//      the clients the test suite checks /metrics, the query API and alert delivery with.
// Each step prints one line saying what it did.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const wantBrowser = process.argv.includes("--browser");
const wantPrometheus = process.argv.includes("--prometheus");
const say = (line) => process.stdout.write(`setup: ${line}\n`);

function fail(line) {
  process.stderr.write(`setup: ${line}\n`);
  process.exit(1);
}

function run(cmd, args, env = process.env) {
  say(`$ ${cmd} ${args.join(" ")}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env });
  if (r.status !== 0) fail(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
}

function checkNode() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19))
    fail(`Node ${process.versions.node} is too old: install Node 20.19 or newer`);
}

function installIfStale() {
  const lock = join(root, "package-lock.json");
  const marker = join(root, "node_modules", ".package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) {
    say("node_modules is up to date");
    return;
  }
  run("npm", ["ci", "--no-audit", "--no-fund"]);
}

function build() {
  const turbo = join(root, "node_modules", ".bin", "turbo");
  run(turbo, ["run", "build", "--output-logs=errors-only"], {
    ...process.env,
    TURBO_TELEMETRY_DISABLED: "1",
    TURBO_NO_UPDATE_NOTIFIER: "1",
  });
}

function onPath(binary) {
  return spawnSync("sh", ["-c", `command -v ${binary}`], { stdio: "ignore" }).status === 0;
}

function canApt() {
  return process.getuid?.() === 0 && existsSync("/etc/debian_version") && onPath("apt-get");
}

let aptUpdated = false;
function ensureBinary(binary, aptPackage, otherHint) {
  if (onPath(binary)) {
    say(`${binary} found`);
    return;
  }
  if (!canApt())
    fail(
      `${binary} is not on PATH: install it (Debian/Ubuntu: sudo apt-get install ${aptPackage}; macOS: ${otherHint}) and run again`,
    );
  if (!aptUpdated) run("apt-get", ["update", "-qq"]);
  aptUpdated = true;
  run("apt-get", ["install", "-y", "-qq", aptPackage], { ...process.env, DEBIAN_FRONTEND: "noninteractive" });
  if (!onPath(binary)) fail(`apt-get installed ${aptPackage} but ${binary} is still not on PATH`);
}

checkNode();
installIfStale();
ensureBinary("nats-server", "nats-server", "brew install nats-server");
if (wantBrowser) ensureBinary("chromium", "chromium", "install Chromium and set TIDEMARK_CHROMIUM to its path");
if (wantPrometheus) {
  ensureBinary("promtool", "prometheus", "brew install prometheus");
  ensureBinary(
    "prometheus-alertmanager",
    "prometheus-alertmanager",
    "brew install alertmanager, then link it as prometheus-alertmanager",
  );
}
build();
say(`ready (nats-server ${execFileSync("nats-server", ["--version"]).toString().trim()})`);
