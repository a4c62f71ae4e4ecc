// Builds every chart of a writepath report from the JSON in #data. Each
// chart's element gets data-points (how many values it drew) once ECharts
// has finished rendering, so a headless browser test can tell a drawn chart
// from an empty one.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var root = document.getElementById("report");
  var charts = [];

  // el builds every element of the page. Text goes in as textContent and
  // attributes through setAttribute, never as markup: names, labels and
  // notes come from users and workers (a group named <img onerror=...>
  // must print as text). Nothing in this file assigns innerHTML.
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // headRow is a table's header row of text cells.
  function headRow(names) {
    var tr = el("tr");
    names.forEach(function (h) { tr.appendChild(el("th", {}, h)); });
    return tr;
  }

  // axisUnits lists, per value axis, its name and the units of the series
  // drawn on it (each series says its unit): one unit per axis is the
  // rule, and the browser test reads it back from data-axes.
  function axisUnits(option) {
    var horizontal = option.yAxis && !Array.isArray(option.yAxis) && option.yAxis.type === "category";
    var axes = [].concat(horizontal ? option.xAxis : option.yAxis);
    var out = axes.map(function (a) { return { name: (a && a.name) || "", units: [] }; });
    (option.series || []).forEach(function (s) {
      if (s.type === "custom") return; // the rounds' spread, drawn on its bars' axis
      var a = out[(horizontal ? s.xAxisIndex : s.yAxisIndex) || 0];
      var u = s.unit === undefined ? "?" : s.unit;
      if (a && a.units.indexOf(u) < 0) a.units.push(u);
    });
    return out;
  }

  function chart(parent, id, option, points) {
    var div = el("div", { "class": "chart", id: id, "data-chart": id });
    div.setAttribute("data-axes", JSON.stringify(axisUnits(option)));
    parent.appendChild(div);
    var c = echarts.init(div, null, { renderer: "canvas" });
    c.on("finished", function () { div.setAttribute("data-points", String(points)); });
    option.animation = false;
    option.tooltip = option.tooltip || { trigger: "axis" };
    option.grid = option.grid || { left: 64, right: 24, top: 48, bottom: 40 };
    c.setOption(option);
    charts.push(c);
    return c;
  }

  function zip(t, v) {
    var out = [];
    for (var i = 0; i < t.length && i < v.length; i++) out.push([t[i], v[i]]);
    return out;
  }

  function count(series) {
    var n = 0;
    series.forEach(function (s) { n += s.data.length; });
    return n;
  }

  function timeChart(parent, id, title, unit, series, logY) {
    if (count(series) === 0) return;
    series.forEach(function (s) { if (s.unit === undefined) s.unit = unit; });
    chart(parent, id, {
      title: { text: title, left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8, type: "scroll", left: 160 },
      tooltip: { trigger: "axis", valueFormatter: function (v) { return (typeof v === "number" ? +v.toPrecision(4) : v) + (unit ? " " + unit : ""); } },
      xAxis: { type: "value", name: "s", min: "dataMin" },
      yAxis: { type: logY ? "log" : "value", name: unit, scale: true },
      series: series
    }, count(series));
  }

  function line(name, t, v) { return { name: name, type: "line", showSymbol: false, data: zip(t || [], v || []) }; }

  function distChart(parent, id, ops) {
    var series = [];
    ops.forEach(function (o) {
      if (!o.Dist) return;
      series.push({
        name: o.Name, type: "line", showSymbol: true, symbolSize: 4, unit: "ms",
        data: o.Dist.filter(function (d) { return d[0] < 100; })
          .map(function (d) { return [1 / (1 - d[0] / 100), d[1]]; })
      });
    });
    if (count(series) === 0) return;
    chart(parent, id, {
      title: { text: "Latency by percentile (HDR)", left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8 },
      tooltip: { trigger: "axis", valueFormatter: function (v) { return v.toFixed(3) + " ms"; } },
      xAxis: {
        type: "log", min: 1, max: 100000,
        name: "percentile", nameLocation: "middle", nameGap: 28,
        axisLabel: { formatter: function (x) { return (100 - 100 / x).toPrecision(6).replace(/\.?0+$/, "") + "%"; } }
      },
      yAxis: { type: "value", name: "ms" },
      series: series
    }, count(series));
  }

  // workersChart draws each worker's throughput and its p99 as two
  // charts, each with its own labelled axes (one unit each).
  function workersChart(parent, id, workers) {
    if (!workers || workers.length === 0) return;
    var names = workers.map(function (w) { return w.Name; });
    [{ key: "", title: "Per worker: throughput", unit: "ops/s", get: function (w) { return w.Rate; } },
     { key: "-p99", title: "Per worker: p99 latency", unit: "ms", get: function (w) { return w.P99Ms; } }].forEach(function (m) {
      var series = [{ name: m.unit, type: "bar", unit: m.unit, data: workers.map(m.get) }];
      chart(parent, id + m.key, {
        title: { text: m.title, left: 8, textStyle: { fontSize: 14 } },
        xAxis: { type: "category", data: names, name: "worker", nameLocation: "middle", nameGap: 26 },
        yAxis: { type: "value", name: m.unit },
        series: series
      }, count(series));
    });
  }

  // panel draws a list of series as small multiples: one chart per unit,
  // so IOPS, KiB/s, ms and % never share an axis. Ids are id-0, id-1...
  function panel(parent, id, title, list) {
    if (!list || list.length === 0) return;
    var byUnit = {}, units = [];
    list.forEach(function (s) {
      var u = s.Unit || "";
      if (!byUnit[u]) { byUnit[u] = []; units.push(u); }
      byUnit[u].push(s);
    });
    units.forEach(function (u, j) {
      var series = byUnit[u].map(function (s) { return line(s.Name, s.T, s.Values); });
      timeChart(parent, id + "-" + j, title + (u ? " — " + u : ""), u, series, false);
    });
  }

  // timelineChart draws each crash round's restart as consecutive phases
  // from the kill (ms): kill → process start → recovery start → redo
  // applied → ready → first commit.
  function timelineChart(parent, id, rounds) {
    if (!rounds || rounds.length === 0) return;
    var labels = rounds.map(function (r) { return "round " + r.Round; });
    var phases = [], byName = {};
    rounds.forEach(function (r, ri) {
      var pts = r.Points || [];
      for (var i = 1; i < pts.length; i++) {
        var name = "→ " + pts[i].Name; // the phase that ends there
        if (byName[name] === undefined) {
          byName[name] = phases.length;
          phases.push({ name: name, type: "bar", stack: "t", unit: "ms", data: rounds.map(function () { return 0; }),
            label: { show: true, position: "inside", formatter: function (p) { return p.value >= 1 ? Math.round(p.value) : ""; } } });
        }
        phases[byName[name]].data[ri] = Math.max(0, pts[i].Ms - pts[i - 1].Ms);
      }
    });
    if (count(phases) === 0) return;
    chart(parent, id, {
      title: { text: "Restart timeline per round: kill -9 → … (ms)", left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, left: 8, right: 8, type: "scroll" },
      tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, valueFormatter: function (v) { return v.toFixed(1) + " ms"; } },
      grid: { left: 72, right: 24, top: 64, bottom: 44 },
      yAxis: { type: "category", data: labels, inverse: true },
      xAxis: { type: "value", name: "ms", nameLocation: "middle", nameGap: 26 },
      series: phases
    }, count(phases));
  }

  function renderRun(r, i) {
    var sec = el("section", { "data-run": r.ID });
    sec.appendChild(el("h2", {}, (r.Title || ("run " + r.ID))));
    sec.appendChild(el("div", { "class": "meta" },
      [r.Kind, r.State, r.Started, r.IntervalS ? r.IntervalS + " s intervals" : ""].filter(Boolean).join(" · ")));
    var ops = r.Ops || [];
    if (ops.length) {
      var t = el("table");
      t.appendChild(headRow(["op", "count", "mean ms", "p99 ms", "max ms"]));
      ops.forEach(function (o) {
        var tr = el("tr");
        [o.Name, o.Count, (o.MeanMs || 0).toFixed(3), (o.P99Ms || 0).toFixed(3), (o.MaxMs || 0).toFixed(3)]
          .forEach(function (v) { tr.appendChild(el("td", {}, String(v))); });
        t.appendChild(tr);
      });
      sec.appendChild(t);
    }
    if (r.Host && r.Host.length) {
      sec.appendChild(el("h3", {}, "Host knobs (set around every phase, restored after)"));
      var ht = el("table", { "data-host": "" });
      var hh = el("tr");
      ["worker", "knob", "target", "before", "set", "read back"].forEach(function (h) { hh.appendChild(el("th", {}, h)); });
      ht.appendChild(hh);
      r.Host.forEach(function (k) {
        var tr = el("tr");
        [k.Worker, k.Knob, k.Target, k.Before, k.Set, k.Read].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
        if (k.Read !== k.Set) tr.setAttribute("class", "differs");
        ht.appendChild(tr);
      });
      sec.appendChild(ht);
    }
    var g = el("div", { "class": "grid" });
    sec.appendChild(g);
    root.appendChild(sec);
    var p = "r" + i + "-";
    var tx = r.Kind === "oltp" || r.Kind === "crash";
    timeChart(g, p + "throughput", tx ? "Transactions" : "Throughput (IOPS)", tx ? "tps" : "ops/s",
      ops.map(function (o) { return line(o.Name, o.T, o.Rate); }));
    timeChart(g, p + "bandwidth", "Bandwidth", "MB/s",
      ops.filter(function (o) { return o.MBps; }).map(function (o) { return line(o.Name, o.T, o.MBps); }));
    panel(g, p + "disk", "Disk profile (credits left %, cap in force)", r.Disk);
    var lat = [];
    ops.forEach(function (o) {
      lat.push(line(o.Name + " p50", o.T, o.P50), line(o.Name + " p99", o.T, o.P99), line(o.Name + " p99.9", o.T, o.P999));
    });
    timeChart(g, p + "latency", "Latency over time", "ms", lat, true);
    distChart(g, p + "distribution", ops);
    workersChart(g, p + "workers", r.Workers);
    timelineChart(g, p + "timeline", r.Timeline);
    panel(g, p + "iostat", "iostat -x", r.Devices);
    panel(g, p + "innodb", "InnoDB", r.InnoDB);
    panel(g, p + "block", "Block layer (per interval, merged over workers)", r.Block);
    panel(g, p + "syscalls", "Syscalls of the processes of interest", r.Syscalls);
    if (r.Evidence && r.Evidence.length) {
      var eh3 = el("h3", {}, "Kernel evidence (eBPF; ms, or bytes for sizes)");
      var et = el("table", { "data-evidence": "" });
      var eh = el("tr");
      ["series", "count", "p50", "p99", "p99.9", "max"].forEach(function (h) { eh.appendChild(el("th", {}, h)); });
      et.appendChild(eh);
      r.Evidence.forEach(function (e) {
        var tr = el("tr");
        var f = function (v) { return e.Unit === "bytes" ? String(Math.round(v)) : v.toFixed(3); };
        [e.Name, String(e.Count), f(e.P50), f(e.P99), f(e.P999), f(e.Max)].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
        et.appendChild(tr);
      });
      sec.insertBefore(eh3, g);
      sec.insertBefore(et, g);
    }
    if (r.Notes && r.Notes.length) sec.appendChild(el("pre", {}, r.Notes.join("\n")));
  }

  // barsWithSpread draws medians as bars (one series per entry of bars:
  // {name, values, lo, hi}) over the cells, with each bar's min–max as an
  // error bar.
  function barsWithSpread(parent, id, title, unit, labels, bars) {
    var series = bars.map(function (b) { return { name: b.name, type: "bar", unit: unit, data: b.values }; });
    var spread = [];
    bars.forEach(function (b, bi) {
      b.values.forEach(function (v, ri) {
        if (v !== null && b.lo && b.lo[ri] !== null) spread.push([ri, bi, b.lo[ri], b.hi[ri]]);
      });
    });
    var n = bars.length;
    series.push({
      name: "min–max", type: "custom", z: 10, data: spread,
      renderItem: function (params, api) {
        var ri = api.value(0), bi = api.value(1);
        var lo = api.coord([ri, api.value(2)]), hi = api.coord([ri, api.value(3)]);
        var band = api.size([1, 0])[0] * 0.8, w = band / n;
        var x = lo[0] - band / 2 + w * (bi + 0.5);
        var style = { stroke: "#1d2330", lineWidth: 1.5 };
        return { type: "group", children: [
          { type: "line", shape: { x1: x, y1: lo[1], x2: x, y2: hi[1] }, style: style },
          { type: "line", shape: { x1: x - 5, y1: lo[1], x2: x + 5, y2: lo[1] }, style: style },
          { type: "line", shape: { x1: x - 5, y1: hi[1], x2: x + 5, y2: hi[1] }, style: style }
        ] };
      }
    });
    chart(parent, id, {
      title: { text: title, left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8, type: "scroll", left: 160 },
      tooltip: { trigger: "axis", valueFormatter: function (v) { return (typeof v === "number" ? +v.toPrecision(4) : v) + " " + unit; } },
      xAxis: { type: "category", data: labels, axisLabel: { interval: 0, rotate: labels.length > 4 ? 20 : 0 } },
      yAxis: { type: "value", name: unit },
      grid: { left: 64, right: 24, top: 56, bottom: 80 },
      series: series
    }, count(series));
  }

  var crashFigures = [["recovery_ms", "recovery"], ["start_to_query_ms", "start>query"], ["kill_to_commit_ms", "kill>commit"]];

  // renderCampaign draws campaign k: the medians per cell and group with
  // the rounds' spread (a crash campaign's recovery figures in ms, else
  // throughput), one chart per telemetry column (its own unit), and the
  // table as the text table prints it.
  function renderCampaign(c, k) {
    var t = c.Table, unit = c.Unit || "ops/s";
    var p = k === 0 ? "campaign-" : "campaign" + k + "-";
    var sec = el("section", { "data-campaign": t.Campaign });
    sec.appendChild(el("h2", {}, "Campaign " + t.Campaign + (t.Kind ? " (" + t.Kind + ")" : "")));
    root.appendChild(sec);
    function rowLabel(r) { return r.Host ? r.Label + " [" + r.Host + "]" : r.Label; }
    var labels = t.Rows.map(rowLabel);
    function agg(gi, get) { return t.Rows.map(function (r) { var a = r.Aggs[gi]; return a.Rounds > 0 ? get(a) : null; }); }
    function fig(a, key, f) { var x = (a.Figures || {})[key]; return x ? x[f] : null; }
    var g = el("div", { "class": "grid" });
    sec.appendChild(g);
    var multi = t.Groups.length > 1;
    if (t.Kind === "crash") {
      var bars = [];
      t.Groups.forEach(function (gn, gi) {
        crashFigures.forEach(function (f) {
          bars.push({ name: (multi ? gn + " " : "") + f[1],
            values: agg(gi, function (a) { return fig(a, f[0], "Median"); }),
            lo: agg(gi, function (a) { return fig(a, f[0], "Min"); }), hi: agg(gi, function (a) { return fig(a, f[0], "Max"); }) });
        });
      });
      barsWithSpread(g, p + "recovery", "Recovery per cell: median over crash rounds (bars), min–max", "ms", labels, bars);
    } else {
      barsWithSpread(g, p + "bars", "Median " + unit + " (bars) and round spread", unit, labels, t.Groups.map(function (gn, gi) {
        return { name: gn, values: agg(gi, function (a) { return a.Throughput; }),
          lo: agg(gi, function (a) { return a.ThroughputMin; }), hi: agg(gi, function (a) { return a.ThroughputMax; }) };
      }));
    }
    if (t.Kind !== "crash") {
      // Latency beside throughput: p99 with the rounds' range, oltp's p95
      // (sysbench's percentile), fio's syncs' p99 where there were syncs.
      var lat = [];
      var ms = function (ns) { return ns === null ? null : ns / 1e6; };
      t.Groups.forEach(function (gn, gi) {
        var pre = multi ? gn + " " : "";
        if (t.Kind === "oltp") lat.push({ name: pre + "p95", values: agg(gi, function (a) { return ms(a.P95); }) });
        lat.push({ name: pre + "p99", values: agg(gi, function (a) { return ms(a.P99); }),
          lo: agg(gi, function (a) { return ms(a.P99Min); }), hi: agg(gi, function (a) { return ms(a.P99Max); }) });
        if (t.Rows.some(function (r) { return r.Aggs[gi].SyncP99 > 0; }))
          lat.push({ name: pre + "fsync p99", values: agg(gi, function (a) { return a.SyncP99 > 0 ? ms(a.SyncP99) : null; }) });
      });
      barsWithSpread(g, p + "latency", "Latency per cell (median over rounds; p99 min–max)", "ms", labels, lat);
    }
    (t.Columns || []).forEach(function (col, j) {
      var u = col.Unit || "";
      barsWithSpread(g, p + "col" + j, col.Key + " per cell (median over rounds)", u, labels, t.Groups.map(function (gn, gi) {
        return { name: gn, values: agg(gi, function (a) { return fig(a, col.Key, "Median"); }),
          lo: agg(gi, function (a) { return fig(a, col.Key, "Min"); }), hi: agg(gi, function (a) { return fig(a, col.Key, "Max"); }) };
      }));
    });
    var tab = el("table", { "data-campaign-table": t.Campaign });
    tab.appendChild(headRow(c.Head || []));
    (c.Rows || []).forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (v) { tr.appendChild(el("td", {}, v)); });
      tab.appendChild(tr);
    });
    sec.appendChild(tab);
  }

  (data.campaigns || []).forEach(renderCampaign);
  (data.runs || []).forEach(renderRun);
  // Charts were sized as the grid filled; size them to their final cells.
  charts.forEach(function (c) { c.resize(); });
})();
