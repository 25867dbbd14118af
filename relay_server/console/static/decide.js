// The page an approval's email links to: it shows the whole request and decides only when
// tapped (opening it decides nothing). The link is the URL's fragment, which the browser never
// sends to a server; the page posts it to the API.
"use strict";

const main = document.getElementById("decide");
const link = decodeURIComponent(location.hash.slice(1));

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = Array.isArray(data.detail) ? "this link is not one of this Relay's" : data.detail;
    throw new Error(detail || response.statusText);
  }
  return data;
}

function show(...nodes) { main.replaceChildren(...nodes); }

function card(approval) {
  const command = approval.payload && approval.payload.tool_input && approval.payload.tool_input.command;
  return el("article", { "data-approval": approval.approval_id },
    el("h2", {}, approval.title),
    el("p", { class: "muted" }, `#${approval.approval_id} · ${approval.kind} · requested by ${approval.requested_by} · ${new Date(approval.created_at).toLocaleString()}`),
    typeof command === "string" ? el("pre", { class: "command" }, `$ ${command}`) : null,
    approval.detail ? el("pre", {}, approval.detail) : null,
    approval.payload ? el("pre", { class: "payload" }, JSON.stringify(approval.payload, null, 2)) : null,
    (approval.options || []).length
      ? el("ol", {}, approval.options.map((o) => el("li", {}, o.description ? `${o.label}: ${o.description}` : o.label)))
      : null,
    approval.expires_at ? el("p", { class: "muted" }, `Expires unanswered at ${new Date(approval.expires_at).toLocaleString()}`) : null);
}

function outcome(approval) {
  const by = approval.decided_by ? ` by ${approval.decided_by}` : "";
  const answer = approval.answer ? `: ${approval.answer.join(", ")}` : "";
  return el("p", { class: "status", id: "outcome" }, `${approval.status.toUpperCase()}${by}${answer}`);
}

async function start() {
  if (!link) { show(el("p", { class: "error" }, "This page needs the link from an approval's email.")); return; }
  let read;
  try { read = await post("/v1/bridges/email/link", { link }); } catch (error) {
    show(el("p", { class: "error", role: "alert" }, error.message)); return;
  }
  const approval = read.approval;
  if (approval.status !== "pending") { show(card(approval), outcome(approval)); return; }
  const rejects = read.action === "Reject";
  const button = el("button", { type: "button", class: rejects ? "reject" : "approve" }, read.action);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const done = await post("/v1/bridges/email/decide", { link });
      show(card(done.approval), el("p", { class: "muted" }, done.said), outcome(done.approval));
    } catch (error) {
      button.disabled = false;
      main.append(el("p", { class: "error", role: "alert" }, error.message));
    }
  });
  show(card(approval),
    el("p", { class: "muted" }, `For ${read.recipient}: one tap decides, once.`),
    button,
    el("p", {}, el("a", { href: `/console#approvals/${approval.approval_id}` }, "Or open the console")));
}

start();
