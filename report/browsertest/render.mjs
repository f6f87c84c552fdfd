// Drives Debian's Chromium headless with playwright-core for orchsim's
// browser tests (report/browser_test.go, go test -tags browser).
//
//   node render.mjs mermaid DIAGRAM.mmd SCREENSHOT.png
//       renders the diagram with the npm package mermaid (its browser
//       bundle, loaded from node_modules) and prints a JSON result:
//       {ok, error, svgLength, messages, notes, participants, rects}
//   node render.mjs html REPORT.html SCREENSHOT.png
//       opens the HTML report from disk and prints a JSON result:
//       {lanes, lanesDeclared, events, violation, violationVisible,
//        violationText, replay, requests, errors}
//
// Chromium is /usr/bin/chromium unless CHROMIUM is set. No browser is
// downloaded: playwright-core only drives the one given.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const [mode, input, screenshot] = process.argv.slice(2);
if (!["mermaid", "html"].includes(mode) || !input || !screenshot) {
  console.error("usage: node render.mjs mermaid|html INPUT SCREENSHOT.png");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  timeout: 60_000,
  // playwright gives every launch a fresh, empty user data directory.
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  let result;
  if (mode === "mermaid") {
    result = await renderMermaid(page, readFileSync(input, "utf8"));
  } else {
    result = await renderHTML(page, resolve(input));
  }
  result.errors = errors;
  result.requests = requests;
  await page.screenshot({ path: screenshot, fullPage: mode === "mermaid" });
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}

async function renderMermaid(page, text) {
  await page.setContent('<!DOCTYPE html><html><body style="margin:0;background:#fff"><div id="out"></div></body></html>');
  await page.addScriptTag({ path: join(here, "node_modules", "mermaid", "dist", "mermaid.min.js") });
  return await page.evaluate(async (text) => {
    // eslint-disable-next-line no-undef
    const m = globalThis.mermaid;
    m.initialize({ startOnLoad: false, securityLevel: "strict", theme: "default" });
    const out = { ok: false, error: "" };
    try {
      await m.parse(text); // throws on a parse error
      const { svg } = await m.render("orchsim-diagram", text);
      document.getElementById("out").innerHTML = svg;
      const el = document.querySelector("#out svg");
      out.ok = true;
      out.svgLength = svg.length;
      out.syntaxError = svg.includes("Syntax error");
      out.messages = el.querySelectorAll(".messageText").length;
      out.notes = el.querySelectorAll(".noteText").length;
      out.participants = el.querySelectorAll("text.actor").length;
      out.rects = el.querySelectorAll("rect.rect").length;
      out.text = el.textContent;
      const box = el.getBoundingClientRect();
      out.width = box.width;
      out.height = box.height;
    } catch (e) {
      out.error = String(e && e.message ? e.message : e);
    }
    return out;
  }, text);
}

async function renderHTML(page, path) {
  await page.goto(pathToFileURL(path).href, { waitUntil: "load" });
  return await page.evaluate(() => {
    const chart = document.getElementById("chart");
    const marker = document.getElementById("violation-marker");
    const scroll = document.getElementById("scroll");
    let visible = false;
    if (marker && scroll) {
      const m = marker.getBoundingClientRect();
      const s = scroll.getBoundingClientRect();
      visible = m.width >= 0 && m.left >= s.left && m.left <= s.right && m.top < window.innerHeight;
    }
    const box = document.getElementById("violation");
    const lanes = document.querySelectorAll("#timeline .lane");
    let lanesDrawn = 0;
    for (const l of lanes) {
      const r = l.getBoundingClientRect();
      if (r.height > 0 && r.width > 0) lanesDrawn++;
    }
    return {
      lanes: lanes.length,
      lanesDrawn,
      lanesDeclared: chart ? Number(chart.dataset.lanes) : -1,
      laneNames: Array.from(document.querySelectorAll(".lane-label")).map((l) => l.dataset.lane),
      events: document.querySelectorAll("#timeline .ev").length,
      eventsDeclared: chart ? Number(chart.dataset.events) : -1,
      violation: !!marker,
      violationVisible: visible,
      violationText: box ? box.textContent : "",
      details: document.getElementById("details").textContent,
      replay: (document.getElementById("replay-cmd") || {}).textContent || "",
    };
  });
}
