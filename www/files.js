// Turning what the user gave the page (a drop, a file picker, a folder picker) into a flat list of
// { path, file } — or { path, size, error } for entries the browser listed but could not hand over.
// Nothing is read here: sizes come from the File objects, bytes are read later in the worker.

/** Files chosen with an <input type=file>, with their folder-relative paths when there are any. */
export function fromInput(fileList) {
  return Array.from(fileList, (file) => ({ path: file.webkitRelativePath || file.name, file }));
}

/**
 * Files and folders dropped on the page; folders are walked with webkitGetAsEntry. Returns the
 * files as `items` and the names dropped as `given` (a folder without files adds no item, and its
 * name is all a message about the drop can say of it).
 */
export async function fromDataTransfer(dataTransfer) {
  const items = Array.from(dataTransfer.items || []);
  const entries = items
    .filter((it) => it.kind === 'file')
    .map((it) => (typeof it.webkitGetAsEntry === 'function' ? it.webkitGetAsEntry() : null));
  if (entries.length === 0 || entries.some((e) => e === null)) {
    // No entry API (or plain files only): the flat file list is all there is.
    return { items: fromInput(dataTransfer.files || []), given: [] };
  }
  const out = [];
  for (const entry of entries) await walk(entry, '', out);
  return { items: out, given: entries.map((e) => e.name) };
}

/**
 * The names a file list was given as, for the engine's messages about the whole input: the drop's
 * top-level names, then each item's (a served path whole, any other path's first folder).
 */
export function givenNames(items, given = []) {
  return [...new Set([...given, ...items.map((i) => (i.served ? i.path : i.path.split('/')[0]))])];
}

async function walk(entry, prefix, out) {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    try {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      out.push({ path, file });
    } catch (err) {
      out.push({ path, size: 0, error: describe(err) });
    }
    return;
  }
  if (!entry.isDirectory) return;
  const reader = entry.createReader();
  const children = [];
  // readEntries returns batches (100 at a time in Chromium) until an empty batch.
  for (;;) {
    let batch;
    try {
      batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    } catch (err) {
      out.push({ path, size: 0, error: `cannot list the folder: ${describe(err)}` });
      break;
    }
    if (batch.length === 0) break;
    children.push(...batch);
  }
  children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const child of children) await walk(child, path, out);
}

function describe(err) {
  if (!err) return 'unknown error';
  return err.message || err.name || String(err);
}
