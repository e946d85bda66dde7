// JSON text handled without parsing it: rank summaries carry nanoseconds since the epoch, which a
// JavaScript number cannot hold exactly, so they cross the page as text.

/** One JSON list holding the items of several lists (each given as its JSON text). */
export function joinLists(texts) {
  const items = texts.map((t) => t.trim().slice(1, -1).trim()).filter((t) => t.length);
  return `[${items.join(',')}]`;
}
