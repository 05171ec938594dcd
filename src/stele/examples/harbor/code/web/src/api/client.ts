// Talks to the registry's own /v2 API with the console's session token; no separate backend.

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os: string; architecture: string };
}

export interface Manifest {
  mediaType: string;
  digest: string;
  config?: Descriptor;
  layers?: Descriptor[];
  manifests?: Descriptor[]; // image index: one entry per platform
  annotations?: Record<string, string>;
}

export const MANIFEST_ACCEPT = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

export async function fetchJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${sessionStorage.getItem("harbor.token") ?? ""}`);
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) {
    const body = await res.json().catch(() => ({ errors: [] }));
    const first = body.errors?.[0] ?? { code: "UNKNOWN", message: res.statusText };
    throw new ApiError(res.status, first.code, first.message);
  }
  if (res.status === 202 || res.status === 204) return undefined as T;
  const json = await res.json();
  return { ...json, digest: res.headers.get("Docker-Content-Digest") ?? json.digest } as T;
}

export class RegistryClient {
  listRepositories(): Promise<{ repositories: string[] }> {
    return fetchJson("/v2/_catalog");
  }

  listTags(repo: string): Promise<{ name: string; tags: string[] }> {
    return fetchJson(`/v2/${repo}/tags/list`);
  }

  getManifest(repo: string, reference: string): Promise<Manifest> {
    return fetchJson(`/v2/${repo}/manifests/${encodeURIComponent(reference)}`, {
      headers: { Accept: MANIFEST_ACCEPT },
    });
  }

  async deleteTag(repo: string, tag: string): Promise<void> {
    await fetchJson(`/v2/${repo}/manifests/${encodeURIComponent(tag)}`, { method: "DELETE" });
  }
}

export const registry = new RegistryClient();
