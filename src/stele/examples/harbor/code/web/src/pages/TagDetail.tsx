import { useEffect, useState } from "react";
import { Manifest, registry } from "../api/client";
import { DeleteTagDialog } from "../components/DeleteTagDialog";

const SOURCE_ANNOTATION = "org.opencontainers.image.source";

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function TagDetail({ repository, tag }: { repository: string; tag: string }) {
  const [manifest, setManifest] = useState<Manifest | null>(null);
  const [deleting, setDeleting] = useState(false);

  useEffect(() => {
    registry.getManifest(repository, tag).then(setManifest);
  }, [repository, tag]);

  if (!manifest) return <p>Loading {repository}:{tag}…</p>;
  // annotations are optional in both OCI and Docker manifests: never assert them with `!`
  const source: string = manifest.annotations?.[SOURCE_ANNOTATION] ?? "";
  const layers = manifest.layers ?? [];
  const total = layers.reduce((sum, l) => sum + l.size, 0);

  return (
    <section className="tag-detail">
      <h2>
        {repository}:{tag}
      </h2>
      <dl>
        <dt>Digest</dt>
        <dd><code>{manifest.digest}</code></dd>
        <dt>Media type</dt>
        <dd>{manifest.mediaType}</dd>
        <dt>Size</dt>
        <dd>{manifest.manifests ? `${manifest.manifests.length} platforms` : formatBytes(total)}</dd>
        {source && (<><dt>Source</dt><dd><a href={source}>{source}</a></dd></>)}
      </dl>
      <button type="button" className="danger" onClick={() => setDeleting(true)}>
        Delete tag
      </button>
      {deleting && <DeleteTagDialog repository={repository} tag={tag} onClose={() => setDeleting(false)} />}
    </section>
  );
}
