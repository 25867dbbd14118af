// Relay console: plain JavaScript over the same /v1 API the SDK uses. Every text is set with
// textContent (never innerHTML), so nothing an agent writes can run in the operator's browser.
"use strict";

const TOKEN_KEY = "relay.operator-token";
const VIEWS = ["approvals", "interventions", "agents", "tasks", "rooms", "reservations", "notifications", "policies", "webhooks", "search"];
const DRAFT_KEY = "relay.policy-draft";
let token = sessionStorage.getItem(TOKEN_KEY);
let cursor = null;
let watching = false;
// The newest render's number: one that ends after a newer one began (another view asked for,
// or an event's fresher data) shows nothing, so a slow page cannot replace a later one.
let renders = 0;

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "Authorization": `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = Array.isArray(data.detail)
      ? data.detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ")
      : data.detail || response.statusText;
    const error = new Error(detail);
    error.status = response.status;
    throw error;
  }
  return data;
}

function when(iso) {
  if (!iso) return "";
  const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (seconds < 60) return `${Math.round(seconds)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

function until(iso) {
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (seconds <= 0) return "now";
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.round(seconds / 60)} min`;
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

// A long text where a decision is asked: its head and its tail around a mark of what was left
// out, never silently cut (relay_api/elision.py does the same for the bridges, MCP and CLI).
const CARD_FIELD = 2000;
function elide(text, limit = CARD_FIELD) {
  if (text.length <= limit) return text;
  const mark = (count) => ` … ${count.toLocaleString("en-US")} characters left out … `;
  let keep = limit;
  for (let i = 0; i < 3; i += 1) keep = Math.max(0, limit - mark(text.length - keep).length);
  const tail = Math.floor(keep / 2);
  return text.slice(0, keep - tail) + mark(text.length - keep) + (tail ? text.slice(text.length - tail) : "");
}

// A link an agent gave: a link only when it is http(s) (javascript: and the like stay text).
function webLink(url) {
  return /^https?:\/\//i.test(url.trim())
    ? el("a", { href: url, rel: "noopener noreferrer" }, url)
    : el("span", { class: "link" }, url);
}

// The shell command of a coding agent's request, if it carries one.
function commandOf(approval, payload = approval.payload) {
  const input = payload && payload.tool_input;
  return input && typeof input.command === "string" ? input.command : null;
}

// Why a prompt's host cannot run it changed (relay_api/prompts.py says the same), or null.
const UNCHANGEABLE = {
  "codex": "Codex cannot run a changed command: approve or reject it as asked.",
  "claude-code-channel": "A channel's prompt is allowed or denied as asked, never changed.",
};
function unchangeable(approval) {
  return (approval.payload && UNCHANGEABLE[approval.payload.source]) || null;
}

// A table, or `empty` in words when there is no row. Each cell carries its column's label, which
// a phone's narrow screen shows beside the value (a row becomes a card). A column empty in every
// row is left out: it would only take the width the others need.
function table(columns, rows, empty = "None yet.") {
  if (!rows.length) return el("p", { class: "muted empty" }, empty);
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)));
  const blank = (value) => value === "" || value === null || value === undefined;
  const shown = columns.map((_, i) => i).filter((i) => !cells.every((line) => blank(line[i])));
  return el("table", {},
    el("thead", {}, el("tr", {}, shown.map((i) => el("th", { scope: "col" }, columns[i][0])))),
    el("tbody", {}, cells.map((line) => el("tr", {},
      shown.map((i) => el("td", { "data-label": columns[i][0] }, line[i]))))));
}

// Every item of a list, following its cursors, up to `most` (lists answer pages of 1000 at most).
async function listAll(path, field, most = 5000) {
  const items = [];
  let cursor = null;
  do {
    const join = path.includes("?") ? "&" : "?";
    const page = await api("GET", `${path}${join}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    items.push(...page[field]);
    cursor = page.next_cursor;
  } while (cursor && items.length < most);
  return items;
}

// A handler that runs `action` and says in an alert what went wrong, if anything.
function reporting(action) {
  return async (event) => {
    try { await action(event); } catch (error) { alert(error.message); }
  };
}

// A button that runs `action` when pressed (reporting what went wrong).
function actionButton(label, action) {
  return el("button", { type: "button", on: { click: reporting(action) } }, label);
}

// A form's input with its label.
function field(label, input) {
  return el("label", { class: "field" }, label, input);
}

// ---------------------------------------------------------------- views

// `section` with a heading and `content`, brought to the reader (on a phone it is below the
// whole view) and focused for the keyboard.
function present(section, title, content) {
  const heading = el("h3", { tabindex: "-1" }, title);
  section.replaceChildren(heading, content);
  heading.scrollIntoView({ block: "start" });
  heading.focus({ preventScroll: true });
}

// What follows the view's name in the address (#tasks/7, #search/tls cert), if anything.
function named() {
  return decodeURIComponent(location.hash.split("/").slice(1).join("/"));
}

// Once the view is on the page: scroll to what `selector` finds, and mark it.
function bringIntoView(selector) {
  setTimeout(() => {
    const found = document.querySelector(selector);
    if (!found) return;
    const whole = found.closest("article, tr") || found;
    whole.classList.add("named");
    whole.scrollIntoView({ block: "start" });
  });
}

// Note, Approve and Reject for one approval: where it is shown, it can be decided. A request
// to run a command (`approval`) can be approved with the command changed, where its host can
// run it so.
// A decision on an approval: posted, said when it had been decided already, and the queue shown
// again; what went wrong said in an alert.
async function postDecision(noun, id, verb, body) {
  try {
    const decided = await api("POST", `/v1/approvals/${id}/${verb}`, body);
    if (decided.changed === false) {
      alert(`${noun} ${id} was already ${decided.status} by ${decided.decided_by}; nothing changed.`);
    }
    await render();
  } catch (error) { alert(error.message); }
}

function decision(approvalId, approval = null) {
  const note = el("input", { type: "text", id: `note-${approvalId}`, "aria-label": "Note" });
  const asked = approval ? commandOf(approval) : null;
  const why = approval ? unchangeable(approval) : null;
  const command = asked !== null && !why
    ? el("textarea", { id: `command-${approvalId}`, class: "command-edit", rows: "2" }, asked) : null;
  const changed = () => {
    if (!command || command.value === asked) return null;
    const payload = approval.payload;
    return { ...payload, tool_input: { ...payload.tool_input, command: command.value } };
  };
  const decide = (verb, stop = false) => async () => {
    const body = note.value ? { note: note.value } : {};
    if (verb === "approve" && changed()) body.payload = changed();
    if (stop) body.interrupt = true;
    await postDecision("Approval", approvalId, verb, body);
  };
  // "Always allow": approved, and a policy as narrow as the request approves its like from now
  // on (the server makes it, or says why it cannot), for this agent or every agent.
  const scope = approval && rememberable(approval) ? el("select", { id: `scope-${approvalId}`, class: "scope" },
    el("option", { value: "this" }, `${approval.requested_by} only`),
    el("option", { value: "every" }, "every agent")) : null;
  // A command line is approved again in the directory it was asked in, unless chosen wider.
  const cwd = approval && commandOf(approval) !== null ? approval.payload.cwd : undefined;
  const directory = scope && cwd ? el("select", { id: `directory-${approvalId}`, class: "scope" },
    el("option", { value: "this" }, `in ${cwd} only`),
    el("option", { value: "any" }, "in any directory")) : null;
  const always = async () => {
    const body = { remember: true, remember_scope: { agents: scope.value } };
    if (directory) body.remember_scope.directory = directory.value;
    if (note.value) body.note = note.value;
    if (changed()) body.payload = changed();
    try {
      const decided = await api("POST", `/v1/approvals/${approvalId}/approve`, body);
      if (decided.remembered_policy_id !== null) {
        const policy = await api("GET", `/v1/policies/${decided.remembered_policy_id}`);
        alert(`Approved. From now on policy #${policy.policy_id} approves: ${policy.name.replace(/^Always allow /, "")}. Undo in the Decided table for ten minutes.`);
      }
      await render();
    } catch (error) { alert(error.message); }
  };
  return el("div", { class: "decision" },
    command ? el("label", { class: "field", for: `command-${approvalId}` },
      "Command to approve (change it to approve it changed)", command) : null,
    asked !== null && why ? el("p", { class: "muted" }, why) : null,
    el("label", { for: `note-${approvalId}` }, "Note "), note, " ",
    el("button", { type: "button", class: "approve", on: { click: decide("approve") } }, "Approve"), " ",
    el("button", { type: "button", class: "reject", on: { click: decide("reject") } }, "Reject"),
    approval ? [" ", el("button", { type: "button", class: "reject", title: "Reject, and ask the agent to stop what it is doing",
      on: { click: decide("reject", true) } }, "Reject and stop")] : null,
    scope ? el("div", { class: "always-allow" },
      el("button", { type: "button", class: "always", on: { click: always } }, alwaysLabel(approval)), " ",
      el("label", { for: `scope-${approvalId}` }, "for "), scope,
      directory ? [" ", el("label", { for: `directory-${approvalId}` }, "run "), directory] : null) : null);
}

// A question's options and how to answer it: a button an option where one is chosen, boxes to
// tick where several are, and the operator's own words where it allows them; Reject declines.
function answering(question) {
  const id = question.approval_id;
  const note = el("input", { type: "text", id: `note-${id}`, "aria-label": "Note" });
  const send = async (verb, body) => {
    if (note.value) body.note = note.value;
    await postDecision("Question", id, verb, body);
  };
  const boxes = question.multiple ? question.options.map((option, n) =>
    el("input", { type: "checkbox", id: `option-${id}-${n}`, value: option.label })) : [];
  const own = question.allow_other
    ? el("input", { type: "text", id: `other-${id}`, maxlength: 2000, "aria-label": "Your own answer" }) : null;
  const chosen = () => {
    const ticked = boxes.filter((box) => box.checked).map((box) => box.value);
    return own && own.value ? [own.value] : ticked;
  };
  const options = question.options.map((option, n) => el("li", {},
    question.multiple
      ? el("label", { for: `option-${id}-${n}` }, boxes[n], ` ${option.label}`)
      : el("button", { type: "button", class: "option", on: { click: () => send("answer", { answer: [option.label] }) } }, option.label),
    option.description ? el("span", { class: "muted" }, ` ${option.description}`) : null));
  return el("div", { class: "decision question" },
    el("ol", { class: "options" }, options),
    own ? el("label", { class: "field", for: `other-${id}` }, "Or in your own words ", own) : null,
    question.multiple || own
      ? el("button", { type: "button", class: "approve", on: { click: () => send("answer", { answer: chosen() }) } }, "Answer")
      : null, " ",
    el("label", { for: `note-${id}` }, "Note "), note, " ",
    el("button", { type: "button", class: "reject", on: { click: () => send("reject", {}) } }, "Reject"));
}

// Whether "Always allow" is offered: a coding agent's tool request (relay_server's wording.py
// says the same).
function rememberable(approval) {
  return approval.kind === "request" && !!approval.payload && typeof approval.payload.tool_name === "string";
}

const UNDO_SECONDS = 600;  // an "always" is undone in one tap for this long (the bridges' too)

// The policy an "always" created, and its Undo while it is recent and still deciding.
function remembered(approval, policies) {
  const id = approval.remembered_policy_id;
  if (id === null || id === undefined) return "";
  const policy = policies.get(id);
  const recent = Date.now() - Date.parse(approval.decided_at) < UNDO_SECONDS * 1000;
  const undo = policy && policy.enabled && recent ? actionButton("Undo", async () => {
    await api("POST", `/v1/policies/${id}/disable`);
    await render();
  }) : null;
  const state = policy && !policy.enabled ? " (disabled)" : "";
  return el("span", { class: "remembered" }, `policy #${id}${state} `, undo);
}

function diagnosticSection(diagnostic) {
  return el("section", { class: "diagnostic" },
    el("h4", {}, `Latest diagnostic: ${diagnostic.summary} (${diagnostic.severity}, by ${diagnostic.agent_id})`),
    el("pre", {}, pretty(diagnostic.content)));
}

function applicantLine(applicant) {
  const parts = [applicant.name, applicant.kind && `kind: ${applicant.kind}`,
    applicant.capabilities.length ? `capabilities: ${applicant.capabilities.join(", ")}` : "no capabilities listed"];
  return el("p", { class: "applicant" }, parts.filter(Boolean).join(" · "));
}

// The latest diagnostic of an intervention, or null when it has none.
async function latestDiagnostic(interventionId) {
  try {
    return await api("GET", `/v1/interventions/${encodeURIComponent(interventionId)}/diagnostic`);
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
}

// A pending approval's reminder and escalation, where they happened.
function followedUp(approval) {
  const said = [];
  if (approval.escalated_to) said.push(`Escalated to ${approval.escalated_to}`);
  if (approval.reminded_at) said.push(`reminded ${when(approval.reminded_at)}`);
  return said.length ? el("p", { class: "muted escalated" }, said.join(" · ")) : null;
}

// Each selected approval approved on its own, as asked; what failed is said once, the rest stand.
async function approveSelected(ids) {
  if (!ids.length || !confirm(`Approve ${ids.length} selected approval${ids.length === 1 ? "" : "s"} as asked?`)) return;
  const failed = [];
  for (const id of ids) {
    try { await api("POST", `/v1/approvals/${id}/approve`, {}); } catch (error) { failed.push(`#${id}: ${error.message}`); }
  }
  if (failed.length) alert(`Not approved:\n${failed.join("\n")}`);
  await render();
}

async function approvalsView() {
  const approvals = await listAll("/v1/approvals", "approvals");
  const pending = approvals.filter((a) => a.status === "pending");
  const decided = approvals.filter((a) => a.status !== "pending");
  // The policies "always" made lately, to show whether each still decides (one read each).
  const recent = decided.filter((a) => a.remembered_policy_id !== null && a.remembered_policy_id !== undefined
    && Date.now() - Date.parse(a.decided_at) < UNDO_SECONDS * 1000);
  const policies = new Map((await Promise.all(recent.map((a) => api("GET", `/v1/policies/${a.remembered_policy_id}`))))
    .map((p) => [p.policy_id, p]));
  const evidence = await Promise.all(pending.map((a) =>
    a.kind === "intervention" ? latestDiagnostic(a.subject_id) : null));
  // Select-and-approve: a box on each card that can be approved as asked (no question).
  const selected = new Set();
  const batch = el("button", { type: "button", class: "approve-selected", disabled: "" }, "Approve selected");
  const pick = (approval) => approval.kind === "question" ? null : el("label", { class: "pick" },
    el("input", { type: "checkbox", "data-pick": approval.approval_id, on: { change: (event) => {
      if (event.target.checked) selected.add(approval.approval_id); else selected.delete(approval.approval_id);
      batch.textContent = selected.size ? `Approve selected (${selected.size})` : "Approve selected";
      batch.disabled = !selected.size;
    } } }), " Select");
  batch.addEventListener("click", () => approveSelected([...selected]));
  const card = (approval, diagnostic) => el("article", { "data-approval": approval.approval_id },
    pick(approval),
    el("h3", {}, approval.title),
    el("p", { class: "muted" },
      `#${approval.approval_id} · ${approval.kind} · requested by ${approval.requested_by} · ${when(approval.created_at)}`),
    approval.applicant ? applicantLine(approval.applicant) : null,
    commandOf(approval) !== null ? el("pre", { class: "command" }, `$ ${elide(commandOf(approval))}`) : null,
    approval.detail ? el("pre", {}, elide(approval.detail)) : null,
    approval.payload ? el("pre", { class: "payload" }, elide(pretty(approval.payload))) : null,
    approval.expires_at ? el("p", { class: "muted expires" }, `Expires unanswered ${until(approval.expires_at)}`) : null,
    followedUp(approval),
    approval.kind === "intervention"
      ? (diagnostic ? diagnosticSection(diagnostic) : el("p", { class: "muted" }, "No diagnostic uploaded."))
      : null,
    approval.kind === "question" ? answering(approval)
      : decision(approval.approval_id, approval.kind === "request" ? approval : null),
    approval.kind === "request" && !rememberable(approval)
      ? el("button", { type: "button", class: "draft", on: { click: () => draftPolicyLike(approval) } },
        "Draft a policy for requests like this…")
      : null);
  const one = named();  // #approvals/12: a search's link to one
  if (one) bringIntoView(`[data-approval="${CSS.escape(one)}"]`);
  return [
    el("h2", {}, `Pending approvals (${pending.length})`),
    pending.some((a) => a.kind !== "question") ? batch : null,
    pending.length ? pending.map((a, i) => card(a, evidence[i])) : el("p", { class: "muted" }, "Nothing waits for you."),
    el("h2", {}, "Decided"),
    table([
      ["Approval", (a) => el("span", { "data-approval": a.approval_id }, `#${a.approval_id}`)], ["Kind", (a) => a.kind], ["Title", (a) => a.title],
      ["Outcome", (a) => el("span", { class: "status" }, a.interrupt ? `${a.status}, agent stopped` : a.status)],
      ["Changed", (a) => a.approved_payload
        ? `runs: ${elide(commandOf(a, a.approved_payload) ?? pretty(a.approved_payload), 200)}` : ""],
      ["Always", (a) => remembered(a, policies)],
      ["Answer", (a) => (a.answer ? a.answer.join(", ") : "")],
      ["By", (a) => a.decided_by || ""], ["When", (a) => when(a.decided_at)], ["Note", (a) => a.note || ""],
    ], decided, "Nothing decided yet."),
  ];
}

async function interventionsView() {
  const [{ interventions }, approvals] = await Promise.all([
    api("GET", "/v1/interventions?limit=100"), listAll("/v1/approvals", "approvals", 1000)]);
  if (!interventions.length) return [el("h2", {}, "Interventions"), el("p", { class: "muted" }, "None yet.")];
  const byId = new Map(approvals.map((a) => [a.approval_id, a]));
  return [el("h2", {}, "Interventions"), interventions.map((item) => {
    const diagnostic = item.latest_diagnostic;
    const action = item.last_action;
    const approval = item.approval_id ? byId.get(item.approval_id) : null;
    return el("article", { "data-intervention": item.intervention_id },
      el("h3", {}, `${item.intervention_id}${item.title ? ` — ${item.title}` : ""}`),
      el("p", {}, "Status: ", el("span", { class: "status" }, item.status),
        ` · approval: ${item.approval_status}${item.approval_id ? ` (#${item.approval_id})` : ""}`),
      item.proposed_action ? el("p", {}, `Proposed: ${item.proposed_action}${item.risk ? ` (risk: ${item.risk})` : ""}`) : null,
      approval && approval.status !== "pending" && approval.note
        ? el("p", { class: "operator-note" }, `Operator's note: ${approval.note}`) : null,
      diagnostic ? diagnosticSection(diagnostic) : el("p", { class: "muted" }, "No diagnostic yet."),
      item.approval_status === "pending" && item.approval_id ? decision(item.approval_id) : null,
      action ? el("section", { class: "remediation" },
        el("h4", {}, `Remediation: ${action.action} — ${action.status}`),
        el("div", { class: "evidence" },
          el("div", {}, el("strong", {}, "Before"), el("pre", { class: "before" }, pretty(action.evidence_before))),
          el("div", {}, el("strong", {}, "After"), el("pre", { class: "after" }, pretty(action.evidence_after)))),
        action.link ? el("p", {}, webLink(action.link)) : null)
        : el("p", { class: "muted" }, "No remediation recorded."));
  })];
}

async function agentsView() {
  const agents = await listAll("/v1/agents", "agents");
  return [el("h2", {}, `Agents (${agents.length})`), table([
    ["Agent", (a) => a.agent_id], ["Name", (a) => a.name || ""], ["Kind", (a) => a.kind || ""],
    ["Capabilities", (a) => a.capabilities.join(", ")],
    ["Presence", (a) => el("span", { class: a.presence }, a.presence)],
    ["Status", (a) => a.status || ""],
    // Presence is read from heartbeats alone (RELAY_PRESENCE_TTL): the column says so.
    ["Last heartbeat", (a) => when(a.last_seen_at) || "never"],
    ["Inbox", (a) => a.pending_messages ?? ""],
  ], agents, "No agent yet: register one (relay agents register NAME) or approve an enrollment.")];
}

async function tasksView() {
  const tasks = await listAll("/v1/tasks", "tasks");
  const columns = ["open", "claimed", "in_progress", "completed", "failed", "cancelled"];
  const trail = el("section", { id: "trail" });
  const show = (listed) => async () => {
    const [task, events] = await Promise.all([
      api("GET", `/v1/tasks/${listed.task_id}`), listAll(`/v1/tasks/${listed.task_id}/events`, "events")]);
    present(trail, `Task ${task.task_id}: ${task.title}`, el("div", {},
      taskFacts(task), taskActions(task),
      el("h4", {}, "Trail"),
      table([["When", (e) => when(e.created_at)], ["Kind", (e) => e.kind], ["Agent", (e) => e.agent_id || ""],
             ["Progress", (e) => e.progress ?? ""], ["Message", (e) => e.message || ""]], events)));
  };
  const linked = tasks.find((t) => String(t.task_id) === named());
  if (linked) setTimeout(show(linked));  // #tasks/7: a search's link opens its trail
  const facts = (task) => [
    task.assignee ? `for ${task.assignee}` : "", task.claimed_by ? `by ${task.claimed_by}` : "",
    task.priority ? `priority ${task.priority}` : "", task.progress !== null ? `${task.progress}%` : "",
  ].filter(Boolean).join(" · ");
  return [el("h2", {}, "Tasks"), el("div", { class: "board" }, columns.map((status) =>
    el("section", { "aria-label": status },
      el("h3", {}, `${status.replace("_", " ")} (${tasks.filter((t) => t.status === status).length})`),
      el("ul", {}, tasks.filter((t) => t.status === status).map((task) => el("li", {},
        el("button", { type: "button", on: { click: show(task) } }, `#${task.task_id} ${task.title}`),
        el("p", { class: "muted facts" }, facts(task)),
        task.error ? el("p", { class: "error" }, `Error: ${task.error}`) : null))))),
  ), trail];
}

// What a task is: who made it, where it stands, who holds it and what it carries.
function taskFacts(task) {
  const facts = [
    ["Status", el("span", { class: "status" }, task.status.replace("_", " "))],
    ["Created", `${when(task.created_at)} by ${task.created_by}`],
    ["For", task.assignee || "anyone"],
    ["Claimed", task.claimed_by ? `by ${task.claimed_by}, ${when(task.claimed_at)}` : "not yet"],
    ["Lease", task.lease_expires_at ? `ends ${until(task.lease_expires_at)}` : null],
    ["Attempts", `${task.attempts} of ${task.max_attempts}`],
    ["Progress", task.progress !== null ? `${task.progress}%` : null],
    ["Priority", String(task.priority)],
    ["Description", task.description],
    ["Payload", Object.keys(task.payload).length ? el("pre", {}, elide(pretty(task.payload))) : null],
    ["Result", task.result !== null ? el("pre", {}, elide(pretty(task.result))) : null],
    ["Error", task.error ? el("span", { class: "error" }, task.error) : null],
  ].filter(([, value]) => value !== null && value !== "");
  return el("dl", { class: "task-facts" }, facts.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]));
}

// What the operator can do to a task held by an agent that went quiet: fail it, with a reason,
// as that agent (its attempts decide whether it opens again).
function taskActions(task) {
  if (!task.claimed_by || !["claimed", "in_progress"].includes(task.status)) return null;
  const reason = el("input", { type: "text", id: `fail-${task.task_id}`, "aria-label": "Why it failed" });
  return el("div", { class: "decision" }, field("Why it failed ", reason),
    actionButton(`Fail it for ${task.claimed_by}`, async () => {
      await api("POST", `/v1/tasks/${task.task_id}/fail`,
        { agent_id: task.claimed_by, error: reason.value || "failed by the operator" });
      await render();
    }));
}

async function roomsView() {
  const archived = location.hash.includes("archived");
  const [spaces, rooms] = await Promise.all([
    listAll(`/v1/spaces?include_archived=${archived}`, "spaces"), listAll("/v1/rooms", "rooms")]);
  const messages = el("section", { id: "room-messages" });
  const open = (room) => async () => {
    const page = await api("GET", `/v1/rooms/${encodeURIComponent(room.room_id)}/messages?limit=50`);
    messages.replaceChildren(el("h3", {}, `Recent messages in ${room.name}`),
      table([["When", (m) => when(m.created_at)], ["From", (m) => m.from_agent], ["Text", (m) => m.text]], page.messages));
  };
  const roomList = (list) => el("ul", {}, list.map((room) =>
    el("li", {}, el("button", { type: "button", on: { click: open(room) } }, room.name), room.topic ? ` — ${room.topic}` : "")));
  return [
    el("h2", {}, "Rooms and spaces"),
    el("p", {}, el("a", { href: archived ? "#rooms" : "#rooms/archived" }, archived ? "Hide archived spaces" : "Show archived spaces")),
    spaces.map((space) => el("section", { class: "card" },
      el("h3", {}, `${space.name}${space.status === "archived" ? " (archived)" : ""}`),
      roomList(rooms.filter((r) => r.space_id === space.space_id)))),
    el("section", { class: "card" }, el("h3", {}, "Rooms outside spaces"), roomList(rooms.filter((r) => !r.space_id))),
    messages,
  ];
}

// Who is editing what: the active reservations, by workspace, with a release for each.
async function reservationsView() {
  const reservations = await listAll("/v1/reservations", "reservations");
  const byWorkspace = new Map();
  for (const r of reservations) byWorkspace.set(r.workspace, [...(byWorkspace.get(r.workspace) || []), r]);
  const release = (r) => el("button", { type: "button", "aria-label": `Release reservation ${r.reservation_id}`,
    on: { click: reporting(async () => { await api("POST", `/v1/reservations/${r.reservation_id}/release`); await render(); }) } },
    "Release");
  const sections = [...byWorkspace.entries()].map(([workspace, held]) => [el("h3", {}, workspace), table([
    ["Reservation", (r) => `#${r.reservation_id}`], ["Holder", (r) => r.holder], ["Paths", (r) => r.paths.join(" ")],
    ["Kind", (r) => (r.exclusive ? "exclusive" : "shared")], ["Reason", (r) => r.reason || ""],
    ["Task", (r) => r.task_id ?? ""], ["Until", (r) => new Date(r.expires_at).toLocaleString()], ["End", release],
  ], held)]);
  return [el("h2", {}, "Reservations"),
    sections.length ? sections.flat() : el("p", { class: "muted" }, "Nobody holds any path: agents reserve them with relay reserve.")];
}

async function notificationsView() {
  const notifications = await listAll("/v1/notifications", "notifications");
  const reply = (n) => {
    if (!n.platform_message_id || !n.agent_id) return "";
    const text = el("input", { type: "text", "aria-label": `Reply to notification ${n.notification_id}` });
    const send = async () => {
      if (!text.value) return;
      try {
        await api("POST", "/v1/notify/replies", { platform_message_id: n.platform_message_id, text: text.value });
        await render();  // the reply count goes up
      } catch (error) { alert(error.message); }
    };
    return el("span", {}, text, " ", el("button", { type: "button", on: { click: send } }, "Reply"));
  };
  return [el("h2", {}, "Notifications"), table([
    ["When", (n) => when(n.created_at)], ["From", (n) => n.agent_id || "operator"], ["Text", (n) => n.text],
    ["Status", (n) => el("span", { class: "status" }, n.status)], ["Bridge", (n) => (n.platform_message_id ? `${n.bridge} · ${n.platform_message_id}` : n.bridge)],
    ["Error", (n) => n.error || ""], ["Replies", (n) => n.replies ?? 0], ["Reply", reply],
  ], notifications, "No notification yet: agents send them with relay notify.")];
}

// What "Always allow" approves from now on, in words: the button's label.
function alwaysLabel(approval) {
  if (commandOf(approval) !== null) return "Always allow exactly this command line";
  return `Always allow ${approval.payload.tool_name} with this input`;
}

// A draft of the narrowest policy that approves a request naming no tool again, for the operator
// to read and save ("Always allow" makes one at once for a coding agent's tool request): the
// same agent and kind, and this title exactly.
function draftPolicyLike(approval) {
  const title = "^" + approval.title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
  const match = { kinds: [approval.kind], agents: [approval.requested_by], title };
  const summary = `Approves, without asking you, ${approval.kind} approvals from ${approval.requested_by} titled exactly: ${approval.title}`;
  sessionStorage.setItem(DRAFT_KEY, JSON.stringify({ name: `Approve ${approval.title}`.slice(0, 200), match, summary }));
  location.hash = "#policies";
}

function policyForm() {
  const draft = JSON.parse(sessionStorage.getItem(DRAFT_KEY) || "null") || { name: "", match: {} };
  const name = el("input", { type: "text", name: "name", required: true, maxlength: 200, value: draft.name });
  const choice = el("select", { name: "decision" },
    el("option", { value: "approve" }, "approve"), el("option", { value: "reject" }, "reject"));
  const priority = el("input", { type: "number", name: "priority", value: "0" });
  const match = el("textarea", { name: "match", rows: 12 });
  match.value = JSON.stringify(draft.match, null, 2);
  const count = el("input", { type: "number", name: "limit-count", min: 1, placeholder: "no limit" });
  const per = el("input", { type: "number", name: "limit-seconds", min: 1, value: "3600" });
  const note = el("input", { type: "text", name: "note" });
  const save = reporting(async (event) => {
    event.preventDefault();
    const body = { name: name.value, decision: choice.value, priority: Number(priority.value || 0),
                   match: JSON.parse(match.value || "{}"), note: note.value || null };
    if (count.value) body.limit = { count: Number(count.value), per_seconds: Number(per.value) };
    await api("POST", "/v1/policies", body);
    sessionStorage.removeItem(DRAFT_KEY);
    await render();
  });
  if (draft.summary) bringIntoView("form.policy-form");
  return el("form", { class: "policy-form", on: { submit: save } },
    el("h2", {}, draft.name ? "New policy (from an approval)" : "New policy"),
    draft.summary ? el("p", { class: "draft-summary" }, draft.summary) : null,
    field("Name ", name), field("Decision ", choice), field("Priority ", priority),
    field("Match (JSON) ", match), field("At most ", count), field(" per seconds ", per),
    field("Note ", note), el("button", { type: "submit" }, "Save policy"));
}

async function policiesView() {
  const policies = await listAll("/v1/policies", "policies");
  const toggle = (p) => actionButton(p.enabled ? "Disable" : "Enable", async () => {
    await api("POST", `/v1/policies/${p.policy_id}/${p.enabled ? "disable" : "enable"}`);
    await render();
  });
  return [
    el("h2", {}, `Policies (${policies.length})`),
    el("p", { class: "muted" }, "Tried in order of priority (higher first), reject before approve, older first; the first that matches decides."),
    table([
      ["Policy", (p) => `#${p.policy_id}`], ["Name", (p) => p.name], ["Decision", (p) => p.decision],
      ["Priority", (p) => p.priority], ["Match", (p) => el("pre", {}, pretty(p.match))],
      ["Limit", (p) => (p.limit ? `${p.limit.count} per ${p.limit.per_seconds} s` : "")],
      ["Version", (p) => p.version], ["Enabled", (p) => (p.enabled ? "yes" : "no")], ["", toggle],
    ], policies, "No policy: every approval waits for you."),
    policyForm(),
  ];
}

// An endpoint's recent deliveries, a failed one with its Retry button.
async function deliveriesOf(hook, section) {
  const page = await api("GET", `/v1/webhooks/${hook.webhook_id}/deliveries?limit=50`);
  const retry = (d) => (d.status !== "failed" ? "" : actionButton("Retry", async () => {
    await api("POST", `/v1/webhooks/${hook.webhook_id}/deliveries/${d.delivery_id}/retry`);
    await deliveriesOf(hook, section);
  }));
  present(section, `Deliveries to ${hook.url}`, table([
    ["Delivery", (d) => `#${d.delivery_id}`], ["Event", (d) => d.event_type], ["Status", (d) => el("span", { class: "status" }, d.status)],
    ["Attempts", (d) => d.attempts], ["Answer", (d) => d.last_status_code ?? ""], ["Error", (d) => d.last_error || ""],
    ["Next attempt", (d) => (d.next_attempt_at ? until(d.next_attempt_at) : "")], ["When", (d) => when(d.created_at)],
    ["webhook-id", (d) => d.message_id], ["", retry],
  ], page.deliveries, "No delivery yet: Test sends one."));
}

function webhookForm() {
  const url = el("input", { type: "url", name: "url", required: true, maxlength: 2000, placeholder: "https://…" });
  const events = el("input", { type: "text", name: "events", value: "*" });
  const description = el("input", { type: "text", name: "description", maxlength: 500 });
  const save = reporting(async (event) => {
    event.preventDefault();
    const made = await api("POST", "/v1/webhooks", {
      url: url.value, description: description.value || null,
      events: events.value.split(",").map((e) => e.trim()).filter(Boolean),
    });
    await render();
    document.getElementById("webhook-secret").textContent =
      `Webhook ${made.webhook_id}: its signing secret, shown this once: ${made.secret}`;
  });
  return el("form", { class: "policy-form", on: { submit: save } },
    el("h2", {}, "New webhook"), field("URL ", url), field("Events (comma-separated, * wildcard) ", events),
    field("Description ", description), el("button", { type: "submit" }, "Create webhook"));
}

async function webhooksView() {
  const hooks = await listAll("/v1/webhooks", "webhooks");
  const deliveries = el("section", { id: "deliveries" });
  const act = (h, label, path) => actionButton(label, async () => {
    await api("POST", `/v1/webhooks/${h.webhook_id}/${path}`);
    if (path === "test") await deliveriesOf(h, deliveries);
    else await render();
  });
  const actions = (h) => el("span", {},
    el("button", { type: "button", on: { click: () => deliveriesOf(h, deliveries) } }, "Deliveries"), " ",
    act(h, "Test", "test"), " ", act(h, h.enabled ? "Disable" : "Enable", h.enabled ? "disable" : "enable"));
  return [
    el("h2", {}, `Webhooks (${hooks.length})`),
    el("p", { class: "muted" }, "Events POSTed to your systems, signed (Standard Webhooks) and retried; receivers verify them and deduplicate by webhook-id."),
    el("p", { id: "webhook-secret", class: "secret", role: "status" }),
    table([
      ["Webhook", (h) => `#${h.webhook_id}`], ["URL", (h) => h.url], ["Events", (h) => h.events.join(", ")],
      ["Description", (h) => h.description || ""],
      ["Enabled", (h) => (h.enabled ? "yes" : `no (${h.disabled_reason || "disabled"})`)], ["", actions],
    ], hooks, "No webhook: nothing is sent out."),
    deliveries,
    webhookForm(),
  ];
}

// A snippet as the API marks it ("the [TLS] cert"), each match in <mark>: text nodes only.
function marked(snippet) {
  return snippet.split(/(\[[^\]]*\])/).filter(Boolean).map((part) =>
    part.startsWith("[") && part.endsWith("]") ? el("mark", {}, part.slice(1, -1)) : part);
}

// A direct message's receipt as ticks: sent (one), reached a live session (two), acknowledged
// (two, and said); the times in its tooltip. A room post has none.
function ticks(m) {
  if (m.room_id) return "";
  const times = [`sent ${when(m.created_at)}`];
  if (m.delivered_at) times.push(`delivered ${when(m.delivered_at)}`);
  if (m.acked_at) times.push(`acknowledged ${when(m.acked_at)}`);
  const said = m.acked_at ? "✓✓ acknowledged" : m.delivered_at ? "✓✓ delivered" : "✓ sent";
  return el("span", { class: "ticks", title: times.join(" · ") }, said);
}

// What was written, found by its words (#search/<query>): a message opens its conversation
// here, a task its trail on the board, an approval its card.
async function searchView() {
  const query = named();
  document.getElementById("search-box").value = query;
  if (!query) return [el("h2", {}, "Search"), el("p", { class: "muted empty" }, "Type words in the search box: \"a phrase\", -word, OR.")];
  const found = await api("GET", `/v1/search?q=${encodeURIComponent(query)}&limit=50`);
  const thread = el("section", { id: "thread" });
  const open = (hit) => async () => {
    const page = await api("GET", `/v1/messages/${hit.id}/thread?limit=200`);
    present(thread, `Conversation ${page.thread_id}`, table([
      ["When", (m) => when(m.created_at)], ["From", (m) => m.from_agent],
      ["To", (m) => m.to || (m.room_id ? `#${m.room_id}` : "")], ["Text", (m) => m.text],
      ["Receipt", ticks],
    ], page.messages));
  };
  const link = (hit) => {
    const label = `${hit.kind.replace("_", " ")} ${hit.id}`;
    if (hit.kind === "message" || hit.kind === "room_post") return el("button", { type: "button", class: "result", on: { click: open(hit) } }, label);
    if (hit.kind === "task") return el("a", { class: "result", href: `#tasks/${hit.id}` }, label);
    if (hit.kind === "approval") return el("a", { class: "result", href: `#approvals/${hit.id}` }, label);
    return label;
  };
  return [el("h2", {}, `Search: ${query}`), table([
    ["Found", link], ["Title", (h) => h.title || ""], ["Text", (h) => el("span", {}, marked(h.snippet))],
    ["By", (h) => h.from_agent || ""], ["Room", (h) => h.room_id || ""], ["When", (h) => when(h.created_at)],
  ], found.hits, "Nothing found."), thread];
}

const RENDERERS = { approvals: approvalsView, interventions: interventionsView, agents: agentsView,
                    tasks: tasksView, rooms: roomsView, reservations: reservationsView,
                    notifications: notificationsView,
                    policies: policiesView, webhooks: webhooksView, search: searchView };

// ---------------------------------------------------------------- shell

function currentView() {
  const name = location.hash.slice(1).split("/")[0];
  return VIEWS.includes(name) ? name : "approvals";
}

async function updatePendingCount() {
  const count = (await api("GET", "/v1/status")).counts.pending_approvals;
  document.getElementById("pending-count").textContent = count ? String(count) : "";
  document.title = count ? `(${count}) Relay console` : "Relay console";
}

async function render() {
  const mine = ++renders;
  const name = currentView();
  const view = document.getElementById("view");
  for (const link of document.querySelectorAll("nav a")) {
    link.toggleAttribute("aria-current", link.getAttribute("href") === `#${name}`);
    if (link.hasAttribute("aria-current")) link.setAttribute("aria-current", "page");
  }
  try {
    const content = await RENDERERS[name]();
    if (mine !== renders) return;
    view.replaceChildren(...[content].flat(2));
    view.dataset.view = name;
    await updatePendingCount();
  } catch (error) {
    if (error.status === 401) return signOut("That token was refused.");
    view.replaceChildren(el("p", { role: "alert", class: "error" }, error.message));
  }
}

// Live updates: long-poll the event feed; any event re-renders the view and the pending count.
async function watch() {
  if (watching) return;
  watching = true;
  while (token) {
    try {
      const page = await api("GET", `/v1/events?after=${cursor}&wait=25`);
      cursor = page.cursor;
      if (page.events.length > 0) await render();
    } catch (error) {
      if (error.status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
  }
  watching = false;
}

function signOut(message) {
  token = null;
  cursor = null;
  sessionStorage.removeItem(TOKEN_KEY);
  document.getElementById("nav").hidden = true;
  document.getElementById("tools").hidden = true;
  document.getElementById("view").hidden = true;
  document.getElementById("sign-in").hidden = false;
  document.getElementById("sign-in-error").textContent = message || "";
  document.title = "Relay console";
}

async function signIn(candidate) {
  token = candidate;
  try {
    await api("GET", "/v1/status");
  } catch (error) {
    return signOut(error.status === 401 ? "That token was refused." : error.message);
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  // The feed's cursor is taken before the first render, so nothing that happens while the
  // page loads can slip between what it shows and what it waits for.
  cursor = (await api("GET", "/v1/events")).cursor;
  document.getElementById("sign-in").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("tools").hidden = false;
  document.getElementById("view").hidden = false;
  await render();
  watch();
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const field = document.getElementById("token");
    signIn(field.value.trim());
    field.value = "";
  });
  document.getElementById("sign-out").addEventListener("click", () => signOut(""));
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const words = document.getElementById("search-box").value.trim();
    location.hash = `#search/${encodeURIComponent(words)}`;
  });
  window.addEventListener("hashchange", () => token && render());
  if (token) signIn(token);
});
