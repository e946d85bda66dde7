// The machine a benchmark's figures belong to, for every bench's header: the same build runs
// 1.4–1.5× slower on one of the project's VM kinds than on the other, so no figure is recorded
// without the CPU it ran on. Node built-ins only.
import { readFileSync } from 'node:fs';
import { arch, cpus, totalmem } from 'node:os';

/**
 * `/proc/cpuinfo`'s first processor (model name, vendor, family, model, stepping — a VM may show
 * only a generic name such as "Intel(R) Xeon(R) Processor", and the numbers tell the generation),
 * its flags, the logical CPUs and cores, the memory and the architecture.
 */
export function machine() {
  let info = '';
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // Not Linux: only what Node knows.
  }
  const first = info.split(/\n\s*\n/)[0] || '';
  const field = (name) => first.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1].trim();
  const flags = new Set((field('flags') || '').split(/\s+/).filter(Boolean));
  return {
    model: field('model name') || cpus()[0]?.model || 'unknown CPU',
    vendor: field('vendor_id') || null,
    family: field('cpu family') || null,
    modelNumber: field('model') || null,
    stepping: field('stepping') || null,
    logicalCpus: cpus().length,
    coresPerPackage: Number(field('cpu cores')) || null,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    arch: arch(),
    flags,
  };
}

/** One line naming `m` (from {@link machine}), starting "machine: ", for a bench's header. */
export function machineLine(m) {
  const id = m.family ? ` (${m.vendor}, family ${m.family} model ${m.modelNumber} stepping ${m.stepping})` : '';
  const cores = m.coresPerPackage ? `, ${m.coresPerPackage} cores per package` : '';
  return `machine: ${m.model}${id}, ${m.logicalCpus} logical CPUs${cores}, ${m.memoryGiB} GiB RAM`;
}
