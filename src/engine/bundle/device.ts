/**
 * Where the model runs: onnxruntime's CPU provider, its WebGPU provider (Dawn over Vulkan: NVIDIA, AMD, Intel, and
 * Mesa's software lavapipe), or its CUDA provider where an install has it. A device that is asked for and absent is
 * DEVICE_UNAVAILABLE, never a silent fall-back; `auto` takes a GPU only where one is there, and says why it chose.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { EngineError } from '../errors.js';

export const DEVICES = ['cpu', 'webgpu', 'cuda'] as const;
export type Device = (typeof DEVICES)[number];

/** What a caller may ask for: a device, or `auto` (a GPU where one answers, else the CPU). */
export const DEVICE_CHOICES = [...DEVICES, 'auto'] as const;
export type DeviceChoice = (typeof DEVICE_CHOICES)[number];

/** The device an engine runs on, and why (for `auto`: what it found). */
export interface DeviceChoiceMade {
  device: Device;
  reason: string;
}

export function isDeviceChoice(s: string): s is DeviceChoice {
  return (DEVICE_CHOICES as readonly string[]).includes(s);
}

/** A caller's word for a device, checked (a usage error, like any flag's): `where` names the flag or variable. */
export function parseDeviceChoice(s: string, where: string): DeviceChoice {
  if (isDeviceChoice(s)) return s;
  throw new Error(`${where} must be one of ${DEVICE_CHOICES.join(', ')}, got "${s}"`);
}

/** Whether the device is a GPU: the vision pass runs in-process there, batches are wider, shaders are warmed. */
export function isGpu(device: Device): boolean {
  return device !== 'cpu';
}

/** onnxruntime-node ships the CUDA provider library only when installed with its CUDA binaries. */
export function cudaProviderPresent(): boolean {
  const cuda = ort.listSupportedBackends().find((b) => b.name === 'cuda');
  if (!cuda) return false;
  if (cuda.bundled) return true;
  try {
    const pkg = dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
    return existsSync(join(pkg, 'bin', 'napi-v6', process.platform, process.arch, 'libonnxruntime_providers_cuda.so'));
  } catch {
    return false;
  }
}

/** A Vulkan driver's manifest (ICD JSON) as the loader would find it, and whether it is a CPU rasteriser. */
export interface VulkanDriver {
  manifest: string;
  library: string;
  software: boolean;
}

/** The CPU Vulkan drivers: Mesa's lavapipe and Google's SwiftShader. */
const SOFTWARE_LIBRARIES = /libvulkan_lvp|libvk_swiftshader/;

/**
 * The folders the Vulkan loader reads driver manifests from on Linux (its own search order), or the files it is told.
 */
function manifestPaths(env: NodeJS.ProcessEnv): string[] {
  const told = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES;
  const listed = (v: string | undefined): string[] => (v ? v.split(':').filter(Boolean) : []);
  const expand = (p: string): string[] => {
    if (p.endsWith('.json')) return existsSync(p) ? [p] : [];
    try {
      return readdirSync(p)
        .filter((f) => f.endsWith('.json'))
        .map((f) => join(p, f));
    } catch {
      return [];
    }
  };
  if (told) return [...listed(told), ...listed(env.VK_ADD_DRIVER_FILES)].flatMap(expand);
  const configDirs = listed(env.XDG_CONFIG_DIRS ?? '/etc/xdg');
  const dataDirs = listed(env.XDG_DATA_DIRS ?? '/usr/local/share:/usr/share');
  const dataHome = env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
  const dirs = [...configDirs, '/etc', dataHome, ...dataDirs].map((d) => join(d, 'vulkan', 'icd.d'));
  return [...dirs, ...listed(env.VK_ADD_DRIVER_FILES)].flatMap(expand);
}

export function vulkanDrivers(env: NodeJS.ProcessEnv = process.env): VulkanDriver[] {
  return manifestPaths(env).flatMap((manifest) => {
    try {
      const icd = (JSON.parse(readFileSync(manifest, 'utf8')) as { ICD?: { library_path?: string } }).ICD;
      const library = icd?.library_path ?? '';
      return library ? [{ manifest, library, software: SOFTWARE_LIBRARIES.test(basename(library)) }] : [];
    } catch {
      return [];
    }
  });
}

/** GPU device nodes: NVIDIA's driver, or a DRM render node (AMD, Intel, and others through Mesa). */
function gpuNodes(): string[] {
  const nodes: string[] = [];
  try {
    nodes.push(
      ...readdirSync('/dev')
        .filter((f) => /^nvidia\d+$/.test(f))
        .map((f) => `/dev/${f}`),
    );
  } catch {
    /* no /dev listing: none */
  }
  try {
    nodes.push(
      ...readdirSync('/dev/dri')
        .filter((f) => f.startsWith('renderD'))
        .map((f) => `/dev/dri/${f}`),
    );
  } catch {
    /* no DRM */
  }
  return nodes;
}

/**
 * The devices `auto` tries, in order, each with why: WebGPU where a GPU device node and a hardware Vulkan driver are
 * both there (a machine with only lavapipe has a Vulkan device, but it is the CPU again, and slower than the CPU
 * provider), CUDA where the provider is installed, and the CPU always last.
 */
export function autoCandidates(env: NodeJS.ProcessEnv = process.env): DeviceChoiceMade[] {
  const out: DeviceChoiceMade[] = [];
  const nodes = gpuNodes();
  const hardware = vulkanDrivers(env).filter((d) => !d.software);
  if (nodes.length && hardware.length) {
    out.push({
      device: 'webgpu',
      reason: `auto: GPU ${nodes[0]} with the Vulkan driver ${basename(hardware[0].manifest)}`,
    });
  }
  if (nodes.length && cudaProviderPresent())
    out.push({ device: 'cuda', reason: `auto: GPU ${nodes[0]} with onnxruntime's CUDA provider` });
  const why = !nodes.length
    ? 'no GPU device node (/dev/nvidia*, /dev/dri/renderD*)'
    : 'no hardware Vulkan driver and no CUDA provider';
  out.push({ device: 'cpu', reason: `auto: ${why}` });
  return out;
}

/** A device's absence as the engine's error, with what would make it present. */
export function deviceUnavailable(device: Device, detail: string, file?: string): EngineError {
  const fix =
    device === 'webgpu'
      ? "a Vulkan driver that offers an adapter (NVIDIA, AMD, Intel; Mesa 25's " +
        'lavapipe for a software one; docs/gpu.md)'
      : "onnxruntime's CUDA provider (the CUDA image installs it)";
  return new EngineError(
    'DEVICE_UNAVAILABLE',
    `${device} was requested but is not available: ${detail}. It needs ${fix}, or use --device cpu`,
    file,
  );
}

/** The device a caller asked for before anything opens: CUDA without its provider fails here, by name. */
export function checkDeviceAsked(device: Device): void {
  if (device === 'cuda' && !cudaProviderPresent()) {
    throw deviceUnavailable(
      'cuda',
      'this onnxruntime-node install has no CUDA provider (it was installed with ONNXRUNTIME_NODE_INSTALL=skip)',
    );
  }
}

/** Whether an error from opening a session on `device` says the device itself is missing (not the graph). */
export function isDeviceFailure(device: Device, message: string): boolean {
  if (device === 'webgpu') return /adapter|WebGpuContext|vulkan|Dawn|webgpu/i.test(message);
  if (device === 'cuda') return /cuda|cudnn|provider/i.test(message);
  return false;
}
