// The Copse dashboard (docs/api.md, "Dashboard"). Plain JavaScript over
// /api/v1; d3 5, dagre-d3 and Chart.js 3 from Debian, served by the master.
// Views by URL hash: #/ (computers and jobs), #/job/ID (DAG, vertices,
// timeline, explanations; #/job/ID/task/T opens T's explanation),
// #/scheduler (allocations, queue, rounds, flow graph), #/dfs (files).
// Every view refreshes itself once a second; #render-ms shows how long the
// last refresh took, from its first request to the page updated.
'use strict';

const API = '/api/v1';
const REFRESH_MS = 1000;
const PAGE = 50;

const state = {
  view: 'cluster', job: null, task: null,
  vertexOffset: 0, vertexSort: 'stage', stage: '', vstate: '',
  dagKey: '', timelineKey: '', chart: null, dfsAfter: [''], computers: {}, racks: {},
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function get(path) {
  const r = await fetch(API + path, {cache: 'no-store'});
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function mb(bytes) { return (bytes / 1e6).toFixed(1); }
function secs(s) { return s < 0 ? '–' : s < 100 ? s.toFixed(2) + ' s' : Math.round(s) + ' s'; }
function clock(ms) { return ms < 0 ? '–' : new Date(ms).toLocaleTimeString(); }
function bytesCell(b) { return `${mb(b.local)} / ${mb(b.rack)} / ${mb(b.core)} MB`; }
function stateSpan(s) { return el('span', {class: 'state-' + s}, s); }

function taskLink(id) {
  if (!id) return '–';
  return el('a', {class: 'task', href: `#/job/${state.job}/task/${id}`}, id);
}

// ---- routing -------------------------------------------------------------

function route() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  state.view = parts[0] === 'job' ? 'job' : parts[0] === 'scheduler' ? 'scheduler'
             : parts[0] === 'dfs' ? 'dfs' : 'cluster';
  const job = parts[0] === 'job' ? Number(parts[1]) : null;
  if (job !== state.job) {
    state.vertexOffset = 0; state.stage = ''; state.vstate = ''; state.dagKey = '';
    state.timelineKey = '';
  }
  state.job = job;
  state.task = parts[2] === 'task' ? Number(parts[3]) : null;
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== 'view-' + state.view;
  refresh();
}

// ---- cluster and jobs ----------------------------------------------------

function useColour(busy, slots) {
  const f = slots ? busy / slots : 0;
  return d3.interpolateYlOrRd(0.1 + 0.8 * f);
}

function renderCluster(c) {
  document.getElementById('cluster-name').textContent = c.name;
  document.getElementById('summary').textContent =
      `${c.live} of ${c.computers} computers live, ${c.busy_slots} of ${c.slots} slots busy` +
      (c.draining ? `, ${c.draining} draining` : '');
  const racks = document.getElementById('racks');
  racks.replaceChildren();
  for (const r of c.racks) {
    state.racks[r.id] = r.name;
    const box = el('div', {class: 'rack'}, el('h4', {}, r.name));
    for (const m of r.computers) {
      state.computers[m.id] = m.name;
      const drain = m.draining ? `, draining (${m.sole_blocks} blocks held nowhere else)` : '';
      box.append(el('div', {
        class: 'computer ' + m.state + (m.draining ? ' draining' : ''),
        style: `background:${useColour(m.busy_slots, m.slots)}`,
        title: `${m.name}: ${m.state}${drain}, heartbeat ${m.heartbeat_age_ms} ms ago, ` +
               `${m.blocks} blocks, ${mb(m.bytes_stored)} MB, tasks ${m.tasks.join(' ')}`,
      }, `${m.name} ${m.busy_slots}/${m.slots}` + (m.draining ? ' draining' : '')));
    }
    racks.append(box);
  }
}

function renderJobs(list) {
  const body = document.querySelector('#jobs-table tbody');
  body.replaceChildren();
  for (const j of list.jobs.slice().reverse()) {
    const done = j.vertices.done, total = j.vertices.total;
    const bar = el('span', {class: 'barbox'},
                   el('span', {class: 'bar', style: `width:${total ? 100 * done / total : 0}%`}));
    body.append(el('tr', {},
        el('td', {}, el('a', {href: `#/job/${j.id}`}, j.id)),
        el('td', {}, el('a', {href: `#/job/${j.id}`}, j.name)),
        el('td', {}, stateSpan(j.state)),
        el('td', {}, bar, ` ${done}/${total}`),
        el('td', {}, secs(j.elapsed_s)),
        el('td', {}, bytesCell(j.bytes_read)),
        el('td', {}, j.failure)));
  }
}

async function refreshCluster() {
  const [c, jobs] = await Promise.all([get('/cluster'), get('/jobs')]);
  renderCluster(c);
  renderJobs(jobs);
}

// ---- one job -------------------------------------------------------------

function renderDag(dag) {
  const key = JSON.stringify(dag.stages.map(s => [s.name, s.states]));
  if (key === state.dagKey) return;
  state.dagKey = key;
  const g = new dagreD3.graphlib.Graph().setGraph({rankdir: 'LR', nodesep: 20, ranksep: 40})
      .setDefaultEdgeLabel(() => ({}));
  for (const f of dag.files) {
    g.setNode('file:' + f, {label: f, class: 'file', shape: 'rect'});
  }
  for (const s of dag.stages) {
    const counts = Object.entries(s.states).filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`).join(', ');
    g.setNode(s.name, {label: `${s.name} ×${s.vertices}\n${s.program}\n${counts}`,
                       class: 'stage', shape: 'rect'});
  }
  for (const e of dag.edges) g.setEdge(e.from, e.to, {label: e.connection});
  const svg = d3.select('#dag');
  const inner = svg.select('g');
  inner.selectAll('*').remove();
  new dagreD3.render()(inner, g);
  const w = g.graph().width || 100, h = g.graph().height || 100;
  // Drawn at its natural size, shrunk to fit the panel when larger.
  svg.attr('viewBox', `-10 -10 ${w + 20} ${h + 20}`).style('max-width', `${w + 20}px`)
      .style('max-height', `${Math.min(h + 20, 420)}px`);
  svg.attr('data-stages', dag.stages.length);
}

function renderVertices(page) {
  const body = document.querySelector('#vertex-table tbody');
  body.replaceChildren();
  for (const v of page.vertices) {
    body.append(el('tr', {},
        el('td', {}, v.stage), el('td', {}, v.index), el('td', {}, v.version),
        el('td', {}, taskLink(v.task)), el('td', {}, v.attempt), el('td', {}, stateSpan(v.state)),
        el('td', {}, v.computer || '–'), el('td', {}, clock(v.launched_ms)),
        el('td', {}, secs(v.duration_s)), el('td', {}, bytesCell(v.bytes_read)),
        el('td', {}, v.runs)));
  }
  const last = Math.min(page.offset + page.limit, page.total);
  document.getElementById('page-info').textContent =
      `${page.total ? page.offset + 1 : 0}–${last} of ${page.total}`;
}

// Drawn on a canvas: a job can have tens of thousands of runs, which as SVG
// elements would take seconds to lay out at every refresh.
function renderTimeline(t) {
  const runs = t.runs.filter(r => r.launched_ms >= 0);
  const key = runs.length + ':' + runs.map(r => r.ended_ms).reduce((a, b) => Math.max(a, b), -1)
      + ':' + runs.filter(r => r.ended_ms < 0).length;
  if (key === state.timelineKey) return;
  state.timelineKey = key;
  const now = Date.now();
  const canvas = document.getElementById('timeline');
  const computers = [...new Set(runs.map(r => r.computer))].sort();
  const lane = 18, left = 70, bottom = 24;
  const width = canvas.parentElement.clientWidth || 900;
  const height = Math.max(40, computers.length * lane + bottom);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = width * ratio; canvas.height = height * ratio;
  canvas.style.width = width + 'px'; canvas.style.height = height + 'px';
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  canvas.dataset.runs = runs.length;
  if (!runs.length) return;
  let t0 = Infinity, t1 = -Infinity;
  for (const r of runs) {
    t0 = Math.min(t0, r.launched_ms);
    t1 = Math.max(t1, r.ended_ms < 0 ? now : r.ended_ms);
  }
  const x = d3.scaleLinear().domain([t0, Math.max(t1, t0 + 1)]).range([left, width - 10]);
  const laneOf = new Map(computers.map((c, i) => [c, i]));
  const colour = {completed: '#4a8', running: '#06c', launched: '#06c', failed: '#c33',
                  killed: '#c33', preempted: '#e90', lost: '#999', withdrawn: '#bbb'};
  ctx.font = '11px sans-serif';
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'middle';
  computers.forEach((c, i) => ctx.fillText(c, 4, i * lane + lane / 2));
  for (const r of runs) {
    const x0 = x(r.launched_ms), x1 = x(r.ended_ms < 0 ? now : r.ended_ms);
    ctx.fillStyle = r.root ? '#345' : (colour[r.state] || '#888');
    ctx.fillRect(x0, laneOf.get(r.computer) * lane + 2, Math.max(1, x1 - x0), lane - 4);
  }
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'top';
  for (const tick of x.ticks(6)) {
    ctx.fillText(((tick - t0) / 1000).toFixed(1) + ' s', x(tick) - 10, computers.length * lane + 6);
  }
  // What is under the mouse.
  canvas.onmousemove = e => {
    const b = canvas.getBoundingClientRect();
    const px = e.clientX - b.left, lanePos = Math.floor((e.clientY - b.top) / lane);
    const hit = runs.find(r => laneOf.get(r.computer) === lanePos && x(r.launched_ms) <= px &&
                          px <= Math.max(x(r.launched_ms) + 1, x(r.ended_ms < 0 ? now : r.ended_ms)));
    canvas.title = hit ? `${hit.label} (task ${hit.task}.${hit.attempt}) ${hit.state}` : '';
  };
}

// An explanation: its summary, its scalar fields, and its lists as tables.
function renderExplain(doc) {
  const box = document.getElementById('explain');
  box.replaceChildren();
  box.className = '';
  box.append(el('p', {id: 'explain-summary'}, el('b', {}, `task ${doc.task}`),
                doc.label ? ` (${doc.label})` : '', ': ', doc.summary || ''));
  const facts = el('table', {});
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'summary' || v === null || typeof v === 'object') continue;
    facts.append(el('tr', {}, el('td', {}, k), el('td', {}, v)));
  }
  box.append(facts);
  for (const [k, v] of Object.entries(doc)) {
    if (Array.isArray(v) && v.length && typeof v[0] === 'object') {
      const cols = [...new Set(v.flatMap(o => Object.keys(o)))];
      const t = el('table', {class: 'grid'}, el('tr', {}, ...cols.map(c => el('th', {}, c))));
      for (const o of v) {
        t.append(el('tr', {}, ...cols.map(c => el('td', {},
            typeof o[c] === 'object' && o[c] !== null ? JSON.stringify(o[c]) : o[c] ?? ''))));
      }
      box.append(el('h4', {}, k), t);
    } else if (v && typeof v === 'object' && !Array.isArray(v)) {
      box.append(el('h4', {}, k), el('pre', {}, JSON.stringify(v, null, 1)));
    }
  }
}

async function refreshJob() {
  const id = state.job;
  const q = new URLSearchParams({offset: state.vertexOffset, limit: PAGE, sort: state.vertexSort});
  if (state.stage) q.set('stage', state.stage);
  if (state.vstate) q.set('state', state.vstate);
  const wants = [get(`/jobs/${id}`), get(`/jobs/${id}/dag`), get(`/jobs/${id}/vertices?${q}`),
                 get(`/jobs/${id}/timeline`)];
  if (state.task) wants.push(get(`/tasks/${state.task}/explain`).catch(e => ({error: e.message})));
  const [job, dag, vertices, timeline, explain] = await Promise.all(wants);
  document.getElementById('job-title').replaceChildren(
      `Job ${job.id}: ${job.name} `, stateSpan(job.state));
  document.getElementById('job-summary').textContent =
      `${job.vertices.done} of ${job.vertices.total} vertices done; elapsed ${secs(job.elapsed_s)};` +
      ` runs ${Object.entries(job.runs).map(([k, n]) => k + ' ' + n).join(', ')};` +
      ` read ${bytesCell(job.bytes_read)}` + (job.failure ? `; ${job.failure}` : '');
  const stageSel = document.getElementById('f-stage');
  if (stageSel.options.length !== dag.stages.length + 1) {
    stageSel.replaceChildren(el('option', {value: ''}, 'all'),
                             ...dag.stages.map(s => el('option', {value: s.name}, s.name)));
  }
  renderDag(dag);
  renderVertices(vertices);
  renderTimeline(timeline);
  if (explain) {
    if (explain.error) {
      document.getElementById('explain').textContent = `task ${state.task}: ${explain.error}`;
    } else {
      renderExplain(explain);
    }
  }
}

// ---- scheduler -----------------------------------------------------------

function renderFlow(doc) {
  const why = document.getElementById('flow-why');
  const svg = d3.select('#flowgraph');
  const inner = svg.select('g');
  inner.selectAll('*').remove();
  if (!doc.graph) { why.textContent = doc.why; return; }
  const fg = doc.graph;
  const tot = fg.totals || {};
  why.textContent = `policy ${doc.policy}; ${tot.nodes} nodes, ${tot.arcs} arcs, ` +
      `cost ${tot.cost}; ${tot.placed} placed, ${tot.unscheduled} unscheduled`;
  const g = new dagreD3.graphlib.Graph({multigraph: false})
      .setGraph({rankdir: 'LR', nodesep: 8, ranksep: 60}).setDefaultEdgeLabel(() => ({}));
  const name = (kind, id) => kind === 'rack' ? (state.racks[id] ?? 'rack ' + id)
                                             : (state.computers[id] ?? 'computer ' + id);
  g.setNode('X', {label: 'X (cluster)'});
  g.setNode('S', {label: 'S (sink)'});
  const edge = (a, b, flow, cap) => {
    if (!flow && cap === undefined) return;
    g.setEdge(a, b, {label: cap === undefined ? String(flow) : `${flow}/${cap}`});
  };
  for (const j of fg.jobs || []) {
    const t = 'T' + j.job, u = 'U' + j.job;
    g.setNode(t, {label: `job ${j.job}: ${j.tasks} tasks`});
    g.setNode(u, {label: `U${j.job} (unscheduled)`});
    const f = j.flow_to || {};
    edge(t, u, f.unscheduled);
    edge(t, 'X', f.cluster);
    for (const r of f.racks || []) {
      g.setNode('R' + r.rack, {label: name('rack', r.rack)}); edge(t, 'R' + r.rack, r.flow);
    }
    for (const c of f.computers || []) {
      g.setNode('C' + c.computer, {label: name('computer', c.computer)});
      edge(t, 'C' + c.computer, c.flow);
    }
    if (j.unscheduled && j.unscheduled.to_sink) {
      edge(u, 'S', j.unscheduled.to_sink.flow, j.unscheduled.to_sink.capacity);
    }
  }
  for (const r of (fg.cluster && fg.cluster.to_racks) || []) {
    g.setNode('R' + r.rack, {label: name('rack', r.rack)});
    edge('X', 'R' + r.rack, r.flow, r.capacity);
  }
  for (const r of fg.racks || []) {
    for (const c of r.to_computers || []) {
      g.setNode('C' + c.computer, {label: name('computer', c.computer)});
      edge('R' + r.rack, 'C' + c.computer, c.flow, c.capacity);
    }
  }
  for (const c of fg.computers || []) {
    g.setNode('C' + c.computer, {label: name('computer', c.computer)});
    if (c.to_sink) edge('C' + c.computer, 'S', c.to_sink.flow, c.to_sink.capacity);
  }
  for (const n of g.nodes()) if (!g.node(n)) g.setNode(n, {label: n});
  new dagreD3.render()(inner, g);
  svg.attr('viewBox', `-10 -10 ${(g.graph().width || 100) + 20} ${(g.graph().height || 100) + 20}`);
}

function renderRounds(rounds) {
  const labels = rounds.map(r => new Date(r.at_ms).toLocaleTimeString());
  const series = [
    {label: 'round ms', data: rounds.map(r => r.round_ms), yAxisID: 'ms', borderColor: '#06c'},
    {label: 'solve ms', data: rounds.map(r => r.solve_ms ?? null), yAxisID: 'ms',
     borderColor: '#c60'},
    {label: 'graph arcs', data: rounds.map(r => r.arcs ?? null), yAxisID: 'size',
     borderColor: '#4a8'},
    {label: 'decisions', data: rounds.map(r => r.decisions), yAxisID: 'size', borderColor: '#999'},
  ];
  if (!state.chart) {
    state.chart = new Chart(document.getElementById('rounds-chart'), {
      type: 'line',
      data: {labels, datasets: series.map(s => ({...s, pointRadius: 0, borderWidth: 1}))},
      options: {animation: false, maintainAspectRatio: false,
                scales: {ms: {position: 'left', title: {display: true, text: 'ms'}},
                         size: {position: 'right', title: {display: true, text: 'count'}}}},
    });
  } else {
    state.chart.data.labels = labels;
    series.forEach((s, i) => { state.chart.data.datasets[i].data = s.data; });
    state.chart.update();
  }
}

async function refreshScheduler() {
  const [s, flow, c] = await Promise.all([get('/scheduler'), get('/scheduler/flowgraph'),
                                          get('/cluster')]);
  renderCluster(c);
  const params = s.parameters ? Object.entries(s.parameters).map(([k, v]) => `${k} = ${v}`)
      .join(', ') : '';
  document.getElementById('sched-summary').textContent =
      `policy ${s.policy}; K = ${s.max_running_jobs}; ${params}`;
  const body = document.querySelector('#alloc-table tbody');
  body.replaceChildren();
  for (const j of s.jobs || []) {
    body.append(el('tr', {}, el('td', {}, el('a', {href: `#/job/${j.job}`}, j.job)),
        el('td', {}, j.running), el('td', {}, j.waiting), el('td', {}, j.fair_share ?? '–'),
        el('td', {}, j.lower_bound ?? '–'), el('td', {}, j.upper_bound ?? '–')));
  }
  const queue = document.getElementById('queue');
  queue.replaceChildren(...(s.queue || []).map(
      q => el('li', {}, el('a', {href: `#/job/${q.job}`}, `job ${q.job}`))));
  renderRounds(s.rounds || []);
  renderFlow(flow);
}

// ---- DFS -----------------------------------------------------------------

async function refreshDfs() {
  const after = state.dfsAfter[state.dfsAfter.length - 1];
  const d = await get('/dfs?limit=100' + (after ? '&after=' + encodeURIComponent(after) : ''));
  document.getElementById('dfs-summary').textContent =
      `${d.file_count} files, ${d.block_count} blocks; ${d.under_replicated.total} ` +
      'blocks under-replicated';
  const body = document.querySelector('#dfs-table tbody');
  body.replaceChildren();
  for (const f of d.files) {
    let short = 0;
    for (const p of f.partitions) for (const b of p.blocks) short += b.live_replicas < f.replication;
    body.append(el('tr', {}, el('td', {}, f.path), el('td', {}, mb(f.size) + ' MB'),
        el('td', {}, f.partitions.length), el('td', {}, f.replication),
        el('td', {}, f.placement), el('td', {}, short)));
  }
  const more = document.getElementById('dfs-more');
  more.hidden = !d.more;
  more.onclick = () => { state.dfsAfter.push(d.next_after); refresh(); };
}

// ---- the refresh loop ----------------------------------------------------

let busy = false;
async function refresh() {
  if (busy) return;
  busy = true;
  const t0 = performance.now();
  try {
    if (state.view === 'job') await refreshJob();
    else if (state.view === 'scheduler') await refreshScheduler();
    else if (state.view === 'dfs') await refreshDfs();
    else await refreshCluster();
    const ms = performance.now() - t0;
    document.getElementById('render-ms').textContent = ms.toFixed(0);
    // Every refresh's time, for `copse bench api` (kept short).
    window.copseRefreshMs = (window.copseRefreshMs || []).slice(-99).concat([ms]);
    document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.view = state.view;
    document.body.dataset.refreshes = Number(document.body.dataset.refreshes || 0) + 1;
  } catch (e) {
    document.getElementById('status').textContent = 'error: ' + e.message;
  } finally {
    busy = false;
  }
}

document.getElementById('prev').onclick = () => {
  state.vertexOffset = Math.max(0, state.vertexOffset - PAGE); refresh();
};
document.getElementById('next').onclick = () => { state.vertexOffset += PAGE; refresh(); };
document.getElementById('f-stage').onchange = e => {
  state.stage = e.target.value; state.vertexOffset = 0; refresh();
};
const stateSel = document.getElementById('f-state');
for (const s of ['pending', 'submitted', 'launched', 'running', 'completed', 'failed', 'killed',
                 'preempted', 'lost', 'withdrawn']) {
  stateSel.append(el('option', {value: s}, s));
}
stateSel.onchange = e => { state.vstate = e.target.value; state.vertexOffset = 0; refresh(); };
for (const th of document.querySelectorAll('#vertex-table th[data-sort]')) {
  th.onclick = () => {
    const k = th.dataset.sort;
    state.vertexSort = state.vertexSort === k ? '-' + k : k;
    state.vertexOffset = 0;
    refresh();
  };
}
window.addEventListener('hashchange', route);
route();
setInterval(refresh, REFRESH_MS);
