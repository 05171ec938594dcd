import { useState } from "react";
import { ApiError, registry } from "../api/client";

// Mirrors the registry's protectedTag pattern; the server still has the final word (409 DENIED).
const PROTECTED_TAG = /^(v[0-9]|release-)/;

interface Props {
  repository: string;
  tag: string;
  onClose: (deleted: boolean) => void;
}

export function DeleteTagDialog({ repository, tag, onClose }: Props) {
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const isProtected = PROTECTED_TAG.test(tag);

  async function confirm() {
    setBusy(true);
    try {
      await registry.deleteTag(repository, tag);
      onClose(true);
    } catch (e) {
      const denied = e instanceof ApiError && e.code === "DENIED";
      setError(denied ? `${tag} is an immutable release tag.` : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div role="dialog" aria-modal="true" className="dialog">
      <h3>Delete {repository}:{tag}?</h3>
      {isProtected ? (
        <p>Release tags (v*, release-*) are immutable and cannot be deleted.</p>
      ) : (
        <>
          <p>The layers are reclaimed by garbage collection after a 48-hour grace period.</p>
          <label>
            Type <code>{tag}</code> to confirm
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus />
          </label>
        </>
      )}
      {error && <p className="error">{error}</p>}
      <button type="button" onClick={() => onClose(false)}>Cancel</button>
      <button type="button" className="danger" onClick={confirm}
        disabled={isProtected || busy || typed !== tag}>
        Delete
      </button>
    </div>
  );
}
