// bugbout's outcome channel, loaded in the test runner's main process only: the key is
// read from an inherited descriptor that is closed at once (the test processes started
// later never see it), and every line written is signed with it.
"use strict";
const { closeSync, readFileSync, writeSync } = require("node:fs");
const { createHmac } = require("node:crypto");

const keyFd = Number(process.env.BUGBOUT_KEY_FD);
const outFd = Number(process.env.BUGBOUT_OUTCOMES_FD);
delete process.env.BUGBOUT_KEY_FD;
let key = "";
if (Number.isInteger(keyFd) && keyFd > 2) {
  key = readFileSync(keyFd, "utf8").trim();
  closeSync(keyFd);
}

function send(record) {
  if (!key || !Number.isInteger(outFd)) return;
  const text = JSON.stringify(record);
  const mac = createHmac("sha256", key).update(text).digest("hex");
  writeSync(outFd, `${mac} ${text}\n`);
}

function message(error) {
  if (error === undefined || error === null) return "";
  const text = typeof error === "string" ? error : (error.message ?? error.stack ?? String(error));
  return String(text).split("\n").find((line) => line.trim()) ?? "";
}

send({ start: process.pid });
module.exports = { send, message };
