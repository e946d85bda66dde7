// Where the "Open an example" files come from: the page's own origin. The offline build swaps this
// module for one with the files inlined.
export async function loadManifest() {
  const res = await fetch('examples/manifest.json');
  if (!res.ok) return [];
  return res.json();
}

export async function loadExampleFile(id, file) {
  const res = await fetch(`examples/${encodeURIComponent(id)}/${file.split('/').map(encodeURIComponent).join('/')}`);
  if (!res.ok) throw new Error(`example file ${id}/${file}: HTTP ${res.status}`);
  return res.blob();
}
