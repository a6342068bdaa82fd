// badge-collector dashboard: progressive enhancement only. Every page works
// without this file (forms submit); with it, the board re-ranks as sliders
// move, pickers apply on change, an agent's unrecognised spans load with the
// owner's key, and a run's trace loads as a waterfall, with a screened run's
// evidence above it. Data reaches the page as text nodes only.
"use strict";

(function () {
  function debounce(fn, ms) {
    var timer = null;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // Leaderboard: viewer weights re-rank the board for this viewer alone.
  var weights = document.getElementById("weights");
  if (weights) {
    var refresh = debounce(function () {
      var query = new URLSearchParams(new FormData(weights)).toString();
      var url = "/?" + query;
      fetch(url, { headers: { accept: "text/html" } })
        .then(function (reply) { return reply.ok ? reply.text() : Promise.reject(reply.status); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html");
          var region = fresh.getElementById("board-region");
          var current = document.getElementById("board-region");
          if (region && current) {
            current.replaceWith(document.importNode(region, true));
            history.replaceState(null, "", url);
          }
        })
        .catch(function () { weights.submit(); });
    }, 200);
    weights.querySelectorAll("input[type=range]").forEach(function (slider) {
      var shown = document.getElementById("v-" + slider.name);
      slider.addEventListener("input", function () {
        if (shown) { shown.value = Number(slider.value).toFixed(1); }
        refresh();
      });
    });
  }

  // Pickers that apply as soon as they change.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.requestSubmit(); });
  });

  // Agent page: which spans no convention recognised is the owner's. With the
  // key typed (held in this page's memory only), the dashboard's coverage page
  // is fetched and its detail takes the place of the form.
  var coverageForm = document.getElementById("coverage-form");
  if (coverageForm) {
    coverageForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var said = document.getElementById("coverage-status");
      var key = document.getElementById("coverage-key").value.trim();
      said.textContent = "Loading…";
      fetch("/agents/" + encodeURIComponent(coverageForm.dataset.agentId) + "/coverage", {
        headers: { accept: "text/html", authorization: "Bearer " + key }
      })
        .then(function (reply) {
          return reply.text().then(function (html) {
            var fresh = new DOMParser().parseFromString(html, "text/html");
            var detail = fresh.getElementById("coverage-detail");
            if (!reply.ok || !detail) {
              var problem = fresh.querySelector(".problem");
              throw new Error(problem ? problem.textContent : "HTTP " + reply.status);
            }
            document.getElementById("coverage-detail").replaceWith(document.importNode(detail, true));
          });
        })
        .catch(function (error) { said.textContent = "Could not load the spans: " + error.message; });
    });
  }

  // Run page: the trace, with the owner's key held in this page's memory only.
  var form = document.getElementById("trace-form");
  if (!form) { return; }
  var status = document.getElementById("trace-status");
  var target = document.getElementById("trace");

  function text(tag, content, cls) {
    var node = document.createElement(tag);
    if (content !== undefined && content !== null) { node.textContent = String(content); }
    if (cls) { node.className = cls; }
    return node;
  }

  function flatten(nodes, depth, out) {
    nodes.slice().sort(function (a, b) { return a.start - b.start; }).forEach(function (node) {
      out.push({ node: node, depth: depth });
      flatten(node.children || [], depth + 1, out);
    });
    return out;
  }

  var FACTS = [
    ["gen_ai.usage.input_tokens", "in"], ["gen_ai.usage.prompt_tokens", "in"],
    ["llm.token_count.prompt", "in"], ["gen_ai.usage.output_tokens", "out"],
    ["gen_ai.usage.completion_tokens", "out"], ["llm.token_count.completion", "out"],
    ["gen_ai.usage.cost", "$"], ["llm.cost.total", "$"], ["badge.cost.usd", "$"],
    ["gen_ai.tool.name", "tool"], ["gen_ai.request.model", "model"]
  ];

  function facts(attributes) {
    var seen = {};
    var parts = [];
    FACTS.forEach(function (pair) {
      var value = attributes ? attributes[pair[0]] : undefined;
      if (value !== undefined && !seen[pair[1]]) {
        seen[pair[1]] = true;
        parts.push(pair[1] + " " + value);
      }
    });
    return parts.join(" · ");
  }

  // Which convention file and rule classified the span (docs/conventions.md).
  function decidedBy(how) {
    if (how.rule_role) {
      return "convention " + how.convention + ", rule " + how.rule_role + "[" + how.rule_index + "]";
    }
    if (how.unrecognised) { return "unrecognised: no convention knows this span"; }
    if (how.convention) { return "convention " + how.convention + " knows it, no rule matched"; }
    return "rule " + (how.rule || "none");
  }

  function render(trace) {
    target.textContent = "";
    var rows = flatten(trace.spans || [], 0, []);
    if (!rows.length) {
      status.textContent = "No span of this run is stored (retention may have removed them).";
      return;
    }
    var first = Math.min.apply(null, rows.map(function (r) { return r.node.start; }));
    var last = Math.max.apply(null, rows.map(function (r) { return r.node.end; }));
    var total = Math.max(last - first, 1);
    var list = text("ol", null, "spans");
    list.setAttribute("aria-label", "Spans in start order, nested by parent");
    rows.forEach(function (row) {
      var node = row.node;
      var how = node.classification || {};
      var item = text("li", null, "span " + (how.counted ? "counted" : "not-counted"));
      item.dataset.spanId = node.span_id;
      item.dataset.role = how.role || "";
      var label = text("div", null, "label");
      label.style.paddingLeft = (row.depth * 1.1) + "em";
      label.appendChild(text("span", node.name, "name"));
      label.appendChild(text("span", how.role || "other", "tag role"));
      var why = how.counted ? "counted" : (how.reason || "not counted");
      label.appendChild(text("span", why, "why"));
      if (how.unrecognised) { label.appendChild(text("span", "unrecognised", "tag unrecognised")); }
      if (how.clock) { label.appendChild(text("span", "clock: " + how.clock, "tag clock")); }
      Object.keys(how.ignored || {}).forEach(function (key) {
        label.appendChild(text("span", "ignored: " + key + " (" + how.ignored[key] + ")", "tag ignored"));
      });
      item.appendChild(label);
      var lane = text("div", null, "lane");
      var bar = text("div", null, "bar" + (node.status && node.status.code === "error" ? " error" : ""));
      bar.style.left = (100 * (node.start - first) / total).toFixed(2) + "%";
      bar.style.width = Math.max(0.4, 100 * (node.end - node.start) / total).toFixed(2) + "%";
      var ms = (node.end - node.start) / 1e6;
      bar.title = node.name + ": " + ms.toFixed(1) + " ms";
      lane.appendChild(bar);
      item.appendChild(lane);
      var more = text("details", null, "more");
      more.appendChild(text("summary", ms.toFixed(1) + " ms · " + decidedBy(how) +
        (facts(node.attributes) ? " · " + facts(node.attributes) : "")));
      more.appendChild(text("pre", JSON.stringify({
        status: node.status, attributes: node.attributes, events: node.events
      }, null, 2), "text"));
      item.appendChild(more);
      list.appendChild(item);
    });
    target.appendChild(list);
    status.textContent = rows.length + " spans" + (trace.truncated ? " (truncated at 10,000)" : "") + ".";
  }

  // The page was rendered without the key: with it, the run's fields that are
  // the owner's (the full error class, the grade's texts) replace the public ones.
  function reveal(headers) {
    fetch("/api/v1/runs/" + encodeURIComponent(form.dataset.runId), { headers: headers })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (run) {
        if (!run || !run.owner_view) { return; }
        document.getElementById("error-class").textContent = run.error_class;
        var texts = document.getElementById("grade-texts");
        if (!run.grade || !texts) { return; }
        // A grade without its own error class shows the evidence's (data-follows),
        // which may have loaded first: only the grade's own class replaces it.
        var gradeClass = document.getElementById("grade-error-class");
        if (run.grade.error_class || !gradeClass.hasAttribute("data-follows")) {
          gradeClass.textContent = run.grade.error_class || "–";
        }
        texts.textContent = "";
        [["Expected", run.grade.expected_output], ["Output", run.grade.output]].forEach(function (pair) {
          if (pair[1]) { texts.appendChild(text("h3", pair[0])); texts.appendChild(text("pre", pair[1], "text")); }
        });
        if (!texts.childNodes.length) {
          texts.appendChild(text("p", texts.dataset.none || "No expected or actual output was recorded.", "note"));
        }
      })
      .catch(function () { /* the public view stays */ });
  }

  // A screened run's evidence (the owner's): marked words as <mark> and .missed, text nodes only.
  function pieces(parent, marked) {
    marked.forEach(function (piece) {
      if (piece.mark === "found") { parent.appendChild(text("mark", piece.text, "found")); }
      else if (piece.mark === "missed") { parent.appendChild(text("span", piece.text, "missed")); }
      else { parent.appendChild(document.createTextNode(piece.text)); }
    });
    return parent;
  }

  function words(label, list, id) {
    var row = text("p", label + " (" + list.length + "):", "words");
    row.id = id;
    list.forEach(function (word) { row.appendChild(document.createTextNode(" ")); row.appendChild(text("code", word)); });
    return row;
  }

  function showEvidence(box, ev) {
    box.textContent = "";
    [["evidence-grader", ev.grader], ["evidence-score", ev.score === null ? null : ev.score.toFixed(3)],
     ["evidence-status", ev.http_status], ["evidence-error", ev.error_class]].forEach(function (pair) {
      var node = document.getElementById(pair[0]);
      if (node) { node.textContent = pair[1] === null ? "–" : String(pair[1]); }
    });
    // The Grade card's figures that come from this evidence follow it (the owner sees more).
    document.querySelectorAll("[data-follows]").forEach(function (node) {
      var source = document.getElementById(node.getAttribute("data-follows"));
      if (source) { node.textContent = source.textContent; }
    });
    if (ev.found) {
      var legend = text("p", "Marked: ", "legend words-legend");
      legend.appendChild(text("mark", "found", "found"));
      legend.appendChild(document.createTextNode(" a word of the expected output that the output has; "));
      legend.appendChild(text("span", "missed", "missed"));
      legend.appendChild(document.createTextNode(" one it lacks (grader " + ev.grader + ")."));
      box.appendChild(legend);
    }
    [["Prompt", "evidence-prompt", ev.prompt === null ? null : [{ text: ev.prompt, mark: null }]],
     ["Expected output", "evidence-expected", ev.expected_output === null ? null : ev.expected_marked],
     ["Output", "evidence-output", ev.output === null ? null : ev.output_marked]].forEach(function (part) {
      box.appendChild(text("h3", part[0]));
      if (part[2] === null) { box.appendChild(text("p", "None recorded.", "muted")); return; }
      var pre = pieces(text("pre", null, "text"), part[2]);
      pre.id = part[1];
      box.appendChild(pre);
    });
    if (ev.found) {
      box.appendChild(words("Found", ev.found, "words-found"));
      box.appendChild(words("Missed", ev.missed, "words-missed"));
    }
    if (ev.detail) { box.appendChild(text("h3", "Why it failed")); box.appendChild(text("pre", ev.detail, "text")); }
    [["Request body", "evidence-request", ev.request_body], ["Response body", "evidence-response", ev.response_body]].forEach(function (part) {
      var more = text("details", null, "body");
      more.appendChild(text("summary", part[0] + (part[2] === null ? " (none recorded)" : "")));
      if (part[2] !== null) { var pre = text("pre", part[2], "text"); pre.id = part[1]; more.appendChild(pre); }
      box.appendChild(more);
    });
  }

  function evidence(headers) {
    var box = document.getElementById("evidence-texts");
    if (!box) { return; }
    fetch("/api/v1/runs/" + encodeURIComponent(box.dataset.runId) + "/evidence", { headers: headers })
      .then(function (reply) { return reply.ok ? reply.json() : Promise.reject(new Error("HTTP " + reply.status)); })
      .then(function (ev) { showEvidence(box, ev); })
      .catch(function (error) {
        box.textContent = "";
        box.appendChild(text("p", "Could not load the evidence: " + error.message, "note"));
      });
  }

  function load() {
    var key = document.getElementById("trace-key");
    var headers = { accept: "application/json" };
    if (key && key.value) { headers.authorization = "Bearer " + key.value.trim(); }
    status.textContent = "Loading…";
    fetch("/api/v1/runs/" + encodeURIComponent(form.dataset.runId) + "/trace", { headers: headers })
      .then(function (reply) {
        return reply.json().then(function (body) {
          if (!reply.ok) { throw new Error(body.detail || ("HTTP " + reply.status)); }
          return body;
        });
      })
      .then(function (trace) {
        render(trace);
        if (form.dataset.open !== "true") { reveal(headers); }
        evidence(headers);
      })
      .catch(function (error) { status.textContent = "Could not load the trace: " + error.message; });
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); load(); });
  if (form.dataset.open === "true") { load(); }
})();
