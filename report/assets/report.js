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

  function chart(parent, id, option, points) {
    var div = el("div", { "class": "chart", id: id, "data-chart": id });
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

  // latency prints nanoseconds in the unit that keeps three digits: a
  // buffered write's 2 µs must not read "0.00 ms".
  function latency(ns) {
    if (ns >= 1e6) return (ns / 1e6).toFixed(ns >= 1e8 ? 0 : 2) + " ms";
    if (ns >= 1e3) return (ns / 1e3).toFixed(ns >= 1e5 ? 0 : 1) + " µs";
    return ns + " ns";
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
    chart(parent, id, {
      title: { text: title, left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8 },
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
        name: o.Name, type: "line", showSymbol: true, symbolSize: 4,
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
        axisLabel: { formatter: function (x) { return (100 - 100 / x).toPrecision(6).replace(/\.?0+$/, "") + "%"; } }
      },
      yAxis: { type: "value", name: "ms" },
      series: series
    }, count(series));
  }

  function workersChart(parent, id, workers) {
    if (!workers || workers.length === 0) return;
    var names = workers.map(function (w) { return w.Name; });
    var series = [
      { name: "ops/s", type: "bar", data: workers.map(function (w) { return w.Rate; }) },
      { name: "p99 ms", type: "bar", yAxisIndex: 1, data: workers.map(function (w) { return w.P99Ms; }) }
    ];
    chart(parent, id, {
      title: { text: "Per worker", left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8 },
      xAxis: { type: "category", data: names },
      yAxis: [{ type: "value", name: "ops/s" }, { type: "value", name: "p99 ms" }],
      series: series
    }, count(series));
  }

  function panel(parent, id, title, list) {
    if (!list || list.length === 0) return;
    var series = list.map(function (s) { return line(s.Name + (s.Unit ? " (" + s.Unit + ")" : ""), s.T, s.Values); });
    timeChart(parent, id, title, "", series, false);
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
    timeChart(g, p + "throughput", "Throughput", "ops/s", ops.map(function (o) { return line(o.Name, o.T, o.Rate); }));
    var byUnit = {}, units = [];
    (r.Disk || []).forEach(function (s) {
      if (!byUnit[s.Unit]) { byUnit[s.Unit] = []; units.push(s.Unit); }
      byUnit[s.Unit].push(s);
    });
    units.forEach(function (u, j) {
      panel(g, p + "disk" + j, u === "%" ? "Disk profile: credits left" : "Disk profile: cap in force (" + u + ")", byUnit[u]);
    });
    var lat = [];
    ops.forEach(function (o) {
      lat.push(line(o.Name + " p50", o.T, o.P50), line(o.Name + " p99", o.T, o.P99), line(o.Name + " p99.9", o.T, o.P999));
    });
    timeChart(g, p + "latency", "Latency over time", "ms", lat, true);
    distChart(g, p + "distribution", ops);
    workersChart(g, p + "workers", r.Workers);
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

  function renderCampaign(t, unit) {
    var sec = el("section", { "data-campaign": t.Campaign });
    sec.appendChild(el("h2", {}, "Campaign " + t.Campaign + " — median " + unit + " per cell and group"));
    root.appendChild(sec);
    function rowLabel(r) { return r.Host ? r.Label + " [" + r.Host + "]" : r.Label; }
    var labels = t.Rows.map(rowLabel);
    var series = [];
    t.Groups.forEach(function (g, gi) {
      series.push({ name: g, type: "bar", data: t.Rows.map(function (r) { return r.Aggs[gi].Throughput; }) });
    });
    var spread = [];
    t.Groups.forEach(function (g, gi) {
      t.Rows.forEach(function (r, ri) {
        var a = r.Aggs[gi];
        if (a.Rounds > 0) spread.push([ri, gi, a.ThroughputMin, a.ThroughputMax]);
      });
    });
    var n = t.Groups.length;
    series.push({
      name: "rounds min–max", type: "custom", z: 10, data: spread,
      renderItem: function (params, api) {
        var ri = api.value(0), gi = api.value(1);
        var lo = api.coord([ri, api.value(2)]), hi = api.coord([ri, api.value(3)]);
        var band = api.size([1, 0])[0] * 0.8, w = band / n;
        var x = lo[0] - band / 2 + w * (gi + 0.5);
        var style = { stroke: "#1d2330", lineWidth: 1.5 };
        return { type: "group", children: [
          { type: "line", shape: { x1: x, y1: lo[1], x2: x, y2: hi[1] }, style: style },
          { type: "line", shape: { x1: x - 5, y1: lo[1], x2: x + 5, y2: lo[1] }, style: style },
          { type: "line", shape: { x1: x - 5, y1: hi[1], x2: x + 5, y2: hi[1] }, style: style }
        ] };
      }
    });
    var g = el("div", { "class": "grid" });
    sec.appendChild(g);
    chart(g, "campaign-bars", {
      title: { text: "Median " + unit + " (bars) and round spread", left: 8, textStyle: { fontSize: 14 } },
      legend: { top: 24, right: 8 },
      xAxis: { type: "category", data: labels, axisLabel: { interval: 0, rotate: labels.length > 4 ? 20 : 0 } },
      yAxis: { type: "value", name: unit },
      grid: { left: 64, right: 24, top: 56, bottom: 80 },
      series: series
    }, count(series));
    var tab = el("table");
    var head = ["cell"];
    var dev = t.Rows.some(function (r) { return r.Aggs.some(function (a) { return a.DeviceP99 > 0; }); });
    t.Groups.forEach(function (g) {
      head.push(g + " " + unit, g + " p99");
      if (dev) head.push(g + " dev p99");
      head.push("Δ");
    });
    tab.appendChild(headRow(head));
    t.Rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", {}, rowLabel(r)));
      r.Aggs.forEach(function (a) {
        tr.appendChild(el("td", {}, a.Rounds ? Math.round(a.Throughput) + " (" + Math.round(a.ThroughputMin) + "–" + Math.round(a.ThroughputMax) + ")" : "-"));
        tr.appendChild(el("td", {}, a.Rounds ? latency(a.P99) : "-"));
        if (dev) tr.appendChild(el("td", {}, a.DeviceP99 > 0 ? latency(a.DeviceP99) : "-"));
        tr.appendChild(el("td", {}, r.Label === t.Baseline ? "base" : (a.Rounds ? a.DeltaPct.toFixed(1) + "%" : "-")));
      });
      tab.appendChild(tr);
    });
    sec.appendChild(tab);
  }

  if (data.campaign) renderCampaign(data.campaign, data.unit || "ops/s");
  (data.runs || []).forEach(renderRun);
  // Charts were sized as the grid filled; size them to their final cells.
  charts.forEach(function (c) { c.resize(); });
})();
