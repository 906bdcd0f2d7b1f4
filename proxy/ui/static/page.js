// The page's only script: new rows from the server's event stream, and the copy button.
// Transcripts and request fields are untrusted text: they only ever go through textContent.
"use strict";

function matches(row, form) {
  if (!form) return true;
  const data = new FormData(form);
  if (data.get("repaired") && row.repairs.length === 0) return false;
  if (data.get("rejected") && !row.rejected) return false;
  const rule = data.get("rule");
  if (rule && !row.repairs.includes(rule)) return false;
  const route = data.get("route");
  if (route && row.route !== route) return false;
  return true;
}

function cell(tr, text) {
  const td = document.createElement("td");
  td.textContent = text;
  tr.appendChild(td);
  return td;
}

function addRow(table, row) {
  const root = table.dataset.root;
  const tr = document.createElement("tr");
  tr.className = "request fresh" + (row.repairs.length ? " repaired" : "") + (row.rejected ? " rejected" : "");
  tr.dataset.id = row.id;
  tr.dataset.route = row.route;
  tr.dataset.repairs = row.repairs.join(" ");
  tr.dataset.rejected = String(row.rejected);
  cell(tr, row.time).title = row.timestamp;
  cell(tr, row.route);
  cell(tr, row.model);
  cell(tr, row.upstream);
  cell(tr, String(row.status));
  cell(tr, String(row.duration_ms));
  const badges = cell(tr, "");
  for (const code of row.repairs) {
    const span = document.createElement("span");
    span.className = "badge";
    span.textContent = code;
    badges.appendChild(span);
    badges.appendChild(document.createTextNode(" "));
  }
  cell(tr, row.outcome).className = "outcome";
  const link = document.createElement("a");
  link.className = "open";
  link.href = root + "requests/" + encodeURIComponent(row.id);
  link.textContent = row.id;
  cell(tr, "").appendChild(link);
  table.tBodies[0].prepend(tr);
  const empty = document.getElementById("empty");
  if (empty) empty.remove();
}

function live(table) {
  const form = document.getElementById("filters");
  const source = new EventSource(table.dataset.events);
  const total = document.getElementById("total");
  source.addEventListener("row", (event) => {
    const row = JSON.parse(event.data);
    if (total) total.textContent = String(Number(total.textContent) + 1);
    if (matches(row, form)) addRow(table, row);
  });
}

function filtersSubmitOnChange() {
  const form = document.getElementById("filters");
  if (!form) return;
  for (const field of form.querySelectorAll("input, select")) {
    field.addEventListener("change", () => form.requestSubmit());
  }
}

function copyButtons() {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const field = document.getElementById(button.dataset.copy);
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
        button.textContent = "Copied";
      } catch (_) {
        button.textContent = "Selected: press Ctrl+C";
      }
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("requests");
  if (table && table.dataset.events) live(table);
  filtersSubmitOnChange();
  copyButtons();
});
