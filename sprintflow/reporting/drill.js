// The drill-down of the sprintflow report: reads the click selections and the filters of the
// Vega view, lists the sampled evaluations that match, and opens one. Chart drawing is all Vega's;
// this is the only hand-written script of the page. Inlined by sprintflow/reporting/html.py.
(function () {
  const read = (id) => JSON.parse(document.getElementById(id).textContent);
  const spec = read("sprintflow-spec"), sample = read("sprintflow-evaluations"), details = read("sprintflow-details");
  const {all: ALL, never: NEVER, picks: PICKS, rowPicks: ROW_PICKS, perDay: PER_DAY, trimmed: TRIMMED,
    detailed: DETAILED} = read("sprintflow-config");
  const DAY = 864e5, LIMIT = 200;
  const drill = document.getElementById("drill"), dialog = document.getElementById("evaluation");
  const rowsPanel = document.getElementById("rows");
  const percent = (x) => (x == null ? "" : (100 * x).toFixed(1) + " %");
  const esc = (text) => String(text == null ? "" : text).replace(/[&<>"]/g,
    (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  const outcome = (value) => `<span class="${esc(value)}">${esc(value)}</span>`;
  const failing = (results) => Object.keys(results).filter((k) => results[k] === "fail").join(", ");

  vegaEmbed("#charts", spec, {renderer: "svg", actions: false}).then(({view}) => {
    let active = null;  // [selection name, {field: [values]}]
    const filter = (name) => view.signal("f_" + name);
    const periodEnd = (start) => {
      const unit = view.signal("period_unit"), at = new Date(start);
      if (unit === "day") return start + DAY;
      if (unit === "week") return start + 7 * DAY;
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
    };
    const inPeriod = (record, start) => {
      const at = Date.parse(record.day);
      return at >= start && at < periodEnd(start);
    };
    // A record or cube row within the dates and the filters ``keys`` (those that apply to it).
    const within = (c, keys) => c.day >= filter("from") && c.day <= filter("to")
      && keys.every((k) => filter(k) === ALL || c[k] === filter(k));
    const periodFrom = (start) => `the ${view.signal("period_unit")} from ${new Date(start).toISOString().slice(0, 10)}`;
    const matchesFilters = (r) => within(r, ["contract", "engine", "executor"])
      && (filter("strategy") === ALL || filter("strategy") in r.strategies)
      && (filter("criterion") === ALL || filter("criterion") in r.criteria);
    // A criterion's verification method, from the coverage cube (a criterion id names one method).
    const methodOf = {};
    ((spec.datasets && spec.datasets.coverage) || []).forEach((c) => { methodOf[c.name] = c.method; });
    const matchesPick = (r, name, value) => {
      if (name === "pick_period") return inPeriod(r, value.period[0]);
      if (name === "pick_strategy") return value.name[0] in r.strategies;
      if (name === "pick_strategy_period") return value.name[0] in r.strategies && inPeriod(r, value.period[0]);
      if (name === "pick_method") return Object.keys(r.criteria).some((c) => methodOf[c] === value.method[0]);
      if (name === "pick_criterion") return value.name[0] in r.criteria && inPeriod(r, value.period[0]);
      if (name === "pick_engine") return r.engine === value.engine[0];
      if (name === "pick_green") return r.green_after === value.iterations[0];
      return false;
    };
    const describe = (name, value) => {
      if (name === "pick_period") return periodFrom(value.period[0]);
      if (name === "pick_strategy") return `strategy ${value.name[0]}`;
      if (name === "pick_strategy_period") return `strategy ${value.name[0]} in ${periodFrom(value.period[0])}`;
      if (name === "pick_method") return `criteria verified by ${value.method[0]}`;
      if (name === "pick_criterion") return `criterion ${value.name[0]} in ${periodFrom(value.period[0])}`;
      if (name === "pick_engine") return `engine ${value.engine[0]}`;
      return value.iterations[0] >= NEVER ? "contracts that never went green" : `contracts green after ${value.iterations[0]} iteration(s)`;
    };
    // How many evaluations the click stands for, from the page's exact day-level sums (null where the
    // sums cannot tell: a strategy or criterion filter narrows evaluations the evaluation cube does not split).
    const cubeRows = (spec.datasets && spec.datasets.outcomes) || [];
    const total = (name, value) => {
      const narrowed = filter("strategy") !== ALL || filter("criterion") !== ALL;
      const level = name.startsWith("pick_strategy") ? "strategy" : name === "pick_criterion" ? "criterion" : "evaluation";
      if (name === "pick_green" || name === "pick_method" || (narrowed && level === "evaluation")) return null;
      return cubeRows.filter((c) => c.level === level && within(c, ["contract", "engine", "executor"])
        && (name !== "pick_engine" || c.engine === value.engine[0])
        && (!name.startsWith("pick_strategy") || c.name === value.name[0])
        && (name !== "pick_strategy_period" || inPeriod(c, value.period[0]))
        && (name !== "pick_criterion" || (c.name === value.name[0] && inPeriod(c, value.period[0])))
        && (name !== "pick_period" || inPeriod(c, value.period[0])))
        .reduce((sum, c) => sum + c.passed + c.failed + c.skipped, 0);
    };
    // The charts of tests, bugs and the scorer are not of evaluations: a click lists the rows of the
    // page's own cube behind it (ROW_PICKS names the cube), under the filters that apply to that chart.
    const ROWS = {
      test: {heading: (v) => `Re-runs of test ${v.name[0]} on unchanged content`,
        filters: ["contract", "engine", "executor"], match: (c, v) => c.level === "test" && c.name === v.name[0],
        columns: [["day", "day"], ["contract", "contract"], ["engine", "engine"], ["executor", "executor"],
          ["comparisons", "re-runs"], ["flips", "flips"]]},
      bugs: {heading: (v) => `Bug events in ${periodFrom(v.period[0])}`,
        filters: ["contract"], match: (c, v) => inPeriod(c, v.period[0]),
        columns: [["day", "day"], ["contract", "contract (unit)"], ["opened", "opened"], ["fixed", "fixed"],
          ["reopened", "reopened"]]},
      score: {heading: (v) => `Scorer run of ${v.label[0]} on ${v.day[0]}`,
        filters: [], match: (c, v) => c.label === v.label[0] && c.day === v.day[0],
        columns: [["day", "day"], ["label", "skill @ prompt"], ["epochs", "epochs"], ["pass_at_1", "pass@1", percent],
          ["pass_at_k", "pass@k", percent], ["pass_hat_k", "score (pass^k)", percent]]},
    };
    const renderRows = (kind, value) => {
      const how = ROWS[kind];
      const rows = ((spec.datasets && spec.datasets[ROW_PICKS[kind]]) || []).filter((c) =>
        within(c, how.filters) && how.match(c, value)).sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
      rowsPanel.hidden = false;
      rowsPanel.querySelector("h2").textContent = how.heading(value);
      rowsPanel.querySelector(".count").textContent = `${rows.length.toLocaleString("en")} ${rows.length === 1 ? "row of the page's data matches" : "rows of the page's data match"}` +
        (rows.length > LIMIT ? `; the newest ${LIMIT} are listed (${(rows.length - LIMIT).toLocaleString("en")} not listed)` : "") +
        (kind === "score" ? " (a row is one scorer run)." : " (a row sums one day of one contract" +
          (kind === "test" ? ", engine and executor)." : ")."));
      rowsPanel.querySelector("thead").innerHTML = `<tr>${how.columns.map(([, title]) => `<th>${esc(title)}</th>`).join("")}</tr>`;
      rowsPanel.querySelector("tbody").innerHTML = rows.slice(0, LIMIT).map((c) => `<tr>${how.columns.map(
        ([field, , format]) => `<td>${esc(format ? format(c[field]) : c[field])}</td>`).join("")}</tr>`).join("");
    };
    const render = () => {
      drill.hidden = rowsPanel.hidden = true;
      if (!active) return;
      const [picked, value] = active;
      if (PICKS[picked] in ROW_PICKS) { renderRows(PICKS[picked], value); return; }
      const name = "pick_" + PICKS[picked];  // every selection of one kind lists alike
      const rows = sample.filter((r) => matchesFilters(r) && matchesPick(r, name, value));
      const own = name.startsWith("pick_strategy") ? (r) => r.strategies[value.name[0]]
        : name === "pick_criterion" ? (r) => r.criteria[value.name[0]] : (r) => r.result;
      drill.hidden = false;
      drill.querySelector("h2").textContent = `Evaluations behind ${describe(name, value)}`;
      const all = total(name, value);
      drill.querySelector(".count").textContent = `${rows.length.toLocaleString("en")} of the sampled evaluations match` +
        (all == null ? "" : ` (of ${all.toLocaleString("en")} in the history: ${(all - rows.length).toLocaleString("en")} not sampled)`) +
        (rows.length > LIMIT ? `; the first ${LIMIT} are listed` : "") +
        ` (the report keeps the newest ${PER_DAY} per day and result` +
        (TRIMMED ? ", and only the most recent of those that fit in the page" : "") + "). Click one to open it.";
      drill.querySelector("tbody").innerHTML = rows.slice(0, LIMIT).map((r) => `<tr data-key="${esc(r.key)}">
        <td>${esc(r.at)}</td><td>${esc(r.contract_id)}</td><td>${r.iteration}</td><td>${esc(r.engine)}</td>
        <td>${esc(r.executor)}</td><td>${outcome(own(r))}</td><td>${outcome(r.result)}</td>
        <td>${esc(failing(r.strategies))}</td><td>${esc(failing(r.criteria))}</td>
        <td>${r.cost == null ? "" : "$" + r.cost.toFixed(2)}</td></tr>`).join("");
    };
    const open = (key) => {
      const r = sample.find((x) => x.key === key), d = details[key];
      const results = (map) => Object.entries(map).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${outcome(v)}</td></tr>`).join("");
      let body = `<h2>${esc(r.eval_id)} <span class="${esc(r.result)}">${esc(r.result)}</span></h2>
        <p class="note">${esc(r.at)} UTC · contract ${esc(r.contract_id)} · iteration ${r.iteration} · engine ${esc(r.engine)}
        · executor ${esc(r.executor)} · content ${esc(r.hash || "unknown")}${r.tokens == null ? "" : " · " + r.tokens.toLocaleString("en") + " tokens"}
        ${r.workspace ? " · workspace " + esc(r.workspace) : ""}${r.flow_run ? ` · <a href="${esc(r.flow_run)}" target="_blank" rel="noopener">its Prefect flow run</a>` : ""}</p>`;
      if (d) {
        body += `<h3>Summary</h3><pre>${esc(d.summary)}</pre>`;
        body += `<h3>Feedback to the generator (${d.feedback.length})</h3><table>${d.feedback.map((f) =>
          `<tr><td>${esc(f.priority)}</td><td>${esc(f.category)}</td><td>${esc(f.file || "")}${f.line ? ":" + f.line : ""}</td>
           <td>${esc(f.description)}<br><span class="note">expected: ${esc(f.expected)}</span></td></tr>`).join("")}</table>`;
        body += `<h3>Strategies</h3>${d.strategies.map((s) => `<p>${outcome(s.result)} <b>${esc(s.name)}</b>: ${esc(s.details)}</p>` +
          (s.diagnostics.length ? `<table>${s.diagnostics.map((g) => `<tr><td>${esc(g.file || "")}${g.line ? ":" + g.line : ""}</td>
           <td>${esc(g.tool)}</td><td>${esc(g.message)}${g.hint ? "<br><span class='note'>hint: " + esc(g.hint) + "</span>" : ""}</td></tr>`).join("")}</table>` : "")).join("")}`;
        body += `<h3>Criteria</h3><table>${d.criteria.map((c) => `<tr><td>${esc(c.id)}</td><td>${outcome(c.result)}</td>
          <td>${esc(c.evidence)}${c.feedback ? "<br><span class='note'>" + esc(c.feedback) + "</span>" : ""}</td></tr>`).join("")}</table>`;
        if (d.regressions.length) body += `<h3>Regressions</h3><ul>${d.regressions.map((g) => `<li>${esc(g)}</li>`).join("")}</ul>`;
        const step = (title, s) => s ? `<h3>${title}</h3><details><summary>prompt (${s.prompt.length.toLocaleString("en")} characters shown)</summary>
          <pre>${esc(s.prompt)}</pre></details><details open><summary>answer</summary><pre>${esc(s.answer)}</pre></details>` : "";
        body += step("Generator", d.generator) + step("Tester", d.tester);
      } else if (sample.indexOf(r) >= DETAILED) {
        body += `<p class="note">The report reads EvalResult details for the newest ${DETAILED.toLocaleString("en")}
          sampled evaluations only; this one is older: what the history recorded follows.</p>
          <h3>Strategies</h3><table>${results(r.strategies)}</table><h3>Criteria</h3><table>${results(r.criteria)}</table>`;
      } else {
        body += `<p class="note">No EvalResult file for this evaluation in .sprintflow/evals/ (or it now holds a later
          evaluation of the same id): what the history recorded follows.</p>
          <h3>Strategies</h3><table>${results(r.strategies)}</table><h3>Criteria</h3><table>${results(r.criteria)}</table>`;
      }
      dialog.querySelector(".body").innerHTML = body;
      dialog.showModal();
    };
    drill.querySelector("tbody").addEventListener("click", (event) => {
      const row = event.target.closest("tr");
      if (row) open(row.dataset.key);
    });
    dialog.querySelector("button").addEventListener("click", () => dialog.close());
    Object.keys(PICKS).forEach((name) => view.addSignalListener(name, (_, value) => {
      active = value && Object.keys(value).length ? [name, value] : (active && active[0] === name ? null : active);
      render();
    }));
    ["from", "to", "contract", "engine", "strategy", "criterion", "executor"].forEach(
      (name) => view.addSignalListener("f_" + name, render));
    // Search: contracts, strategies, criteria and tests the page knows, and the feedback, summaries and
    // criterion feedback of the evaluations it carries details for; a filter value picks the filter,
    // feedback opens its evaluation. Bounded, and the count says what it searched and what it leaves out.
    const options = (name) => ((spec.params || []).find((p) => p.name === "f_" + name) || {bind: {options: []}})
      .bind.options.filter((v) => v !== ALL);
    const tests = [...new Set(((spec.datasets && spec.datasets.flips) || []).filter((c) => c.level === "test")
      .map((c) => c.name))];
    const entries = [
      ...["contract", "strategy", "criterion"].flatMap((kind) => options(kind).map((v) => ({kind, text: v, value: v}))),
      ...tests.map((t) => ({kind: "test", text: t})),
      ...Object.entries(details).flatMap(([key, d]) => [d.summary, ...d.feedback.map((f) => f.description),
        ...d.criteria.map((c) => c.feedback)].filter(Boolean).map((text) => ({kind: "feedback", text, key}))),
    ];
    const box = document.getElementById("search-box"), found = document.getElementById("search-results");
    const SHOWN = 50;
    const search = () => {
      const q = box.value.trim().toLowerCase();
      if (!q) { found.innerHTML = ""; found.previousElementSibling.textContent = ""; return; }
      const hits = entries.filter((e) => e.text.toLowerCase().includes(q));
      found.previousElementSibling.textContent = `${hits.length.toLocaleString("en")} matches` +
        (hits.length > SHOWN ? `, the first ${SHOWN} shown (${(hits.length - SHOWN).toLocaleString("en")} more)` : "") +
        ` in ${options("contract").length} contracts of the filter, ${options("strategy").length} strategies, ` +
        `${options("criterion").length} criteria, ${tests.length} tests and the feedback of ` +
        `${Object.keys(details).length.toLocaleString("en")} evaluations with details (of ` +
        `${sample.length.toLocaleString("en")} sampled).`;
      found.innerHTML = hits.slice(0, SHOWN).map((e, i) => `<li data-hit="${i}"><span class="note">${e.kind}</span> ` +
        `${esc(e.text.length > 200 ? e.text.slice(0, 200) + " …" : e.text)}</li>`).join("");
      found.hits = hits;
    };
    box.addEventListener("input", search);
    found.addEventListener("click", (event) => {
      const item = event.target.closest("li");
      if (!item) return;
      const hit = found.hits[Number(item.dataset.hit)];
      if (hit.kind === "feedback") open(hit.key);
      else if (hit.value !== undefined) view.signal("f_" + hit.kind, hit.value).runAsync();
    });
    window.sprintflowView = view;
    document.body.dataset.ready = "yes";
  }).catch((error) => {
    document.getElementById("charts").textContent = "The charts could not be drawn: " + error;
    document.body.dataset.ready = "error";
  });
})();
