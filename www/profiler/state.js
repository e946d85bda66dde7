// The selection every torch_npu view shares — rank, comparison rank, visible time range, brushed
// window, clicked time, selected allocation, group filter, table filters — mirrored in the URL
// hash. Only view state is written there: indices, numbers and the user's own filter text, never
// names from the user's files (a group is stored by its position in its list).
import * as hash from '../ui/hash-state.js';
import { createStore } from '../ui/store.js';

// A group to select by its frame once the next rank's groups arrive: set by a link from the
// Compare mode, which knows the frame but not the group's position in this view's list (the hash
// keeps positions only, never names from the user's files). Read once, by the next view built.
let wantedGroup = null;

/** The next torch_npu view built selects the `kind` ('live') group of `frame`, if it has one. */
export function selectGroupOnNextView(kind, frame) {
  wantedGroup = { kind, frame };
}

/** The hash keys of the torch_npu views (the page clears them: see analyses.js). */
export const HASH_KEYS = ['rank', 'cmp', 'align', 'v0', 'v1', 'w0', 'w1', 'at', 'row', 'gk', 'gi', 'gb', 'q', 'sq', 'smin', 'smax', 'nowin', 'unrel', 'sort', 'desc', 'hide'];

const num = (v) => (v === undefined || v === '' || v === null || !Number.isFinite(Number(v)) ? null : Number(v));

/** The shared state of the views, read from the hash: the page's store (ui/store.js). */
export function createState(rankCount) {
  const h = hash.getState();
  const wanted = wantedGroup;
  wantedGroup = null;
  const rank = Math.min(Math.max(0, num(h.rank) ?? 0), Math.max(0, rankCount - 1));
  const cmp = num(h.cmp);
  const state = {
    rank,
    cmp: cmp !== null && cmp < rankCount && cmp !== rank ? cmp : null,
    align: h.align === 'step' ? 'step' : 'start',
    // Visible x range of the time charts, ns relative to the capture start.
    view: num(h.v0) !== null && num(h.v1) !== null && num(h.v1) > num(h.v0) ? { x0: num(h.v0), x1: num(h.v1) } : null,
    // Brushed time window [start, end], ns relative.
    window: num(h.w0) !== null && num(h.w1) !== null && num(h.w1) > num(h.w0) ? [num(h.w0), num(h.w1)] : null,
    // Time of the live-set view (null: the rank's peak).
    at: num(h.at),
    row: num(h.row),
    // Group filter from the at-the-peak / unreleased views: { kind, index, frame }; the frame is
    // resolved when the view's groups arrive (the hash keeps only kind and index).
    group: wanted
      ? { kind: wanted.kind, index: -1, frame: null, pending: true, wantedFrame: wanted.frame }
      : h.gk === 'live' || h.gk === 'unreleased'
        ? { kind: h.gk, index: num(h.gi) ?? 0, frame: null, pending: true }
        : null,
    // How the live-set and unreleased views group a rank without call stacks: null (as the core
    // chose: op names) or 'size_class'.
    groupBy: h.gb === 'size' ? 'size_class' : null,
    filters: {
      name: h.q || '',
      stack: h.sq || '',
      min: num(h.smin),
      max: num(h.smax),
      useWindow: h.nowin !== '1',
      unreleased: h.unrel === '1',
    },
    sort: { key: ['time', 'size', 'duration', 'name', 'release', 'frame'].includes(h.sort) ? h.sort : 'time', desc: h.desc === '1' },
    hidden: new Set((h.hide || '').split('.').filter(Boolean)),
  };
  return createStore(state, {
    toHash: (s) => {
      const r = (v) => (v === null || v === undefined ? '' : String(Math.round(v)));
      return {
        rank: s.rank,
        cmp: s.cmp ?? '',
        align: s.align === 'step' ? 'step' : '',
        v0: s.view ? r(s.view.x0) : '',
        v1: s.view ? r(s.view.x1) : '',
        w0: s.window ? r(s.window[0]) : '',
        w1: s.window ? r(s.window[1]) : '',
        at: r(s.at),
        row: s.row ?? '',
        gk: s.group ? s.group.kind : '',
        gi: s.group ? s.group.index : '',
        gb: s.groupBy === 'size_class' ? 'size' : '',
        q: s.filters.name,
        sq: s.filters.stack,
        smin: s.filters.min ?? '',
        smax: s.filters.max ?? '',
        nowin: s.filters.useWindow ? '' : '1',
        unrel: s.filters.unreleased ? '1' : '',
        sort: s.sort.key === 'time' ? '' : s.sort.key,
        desc: s.sort.desc ? '1' : '',
        hide: [...s.hidden].join('.'),
      };
    },
  });
}
