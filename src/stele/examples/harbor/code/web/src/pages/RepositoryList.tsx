import { useEffect, useState } from "react";
import { ApiError, registry } from "../api/client";

// Polling, not push: see the record for why the websocket feed was dropped.
const POLL_MS = 30_000;

interface Props {
  filter: string;
  onSelect: (repository: string) => void;
}

export function RepositoryList({ filter, onSelect }: Props) {
  const [repositories, setRepositories] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    const load = () =>
      registry
        .listRepositories()
        .then((r) => !cancelled && setRepositories(r.repositories))
        .catch((e: unknown) => !cancelled && setError(e instanceof ApiError ? e.message : String(e)));
    load();
    const timer = window.setInterval(load, POLL_MS);
    return () => {
      cancelled = true;
      window.clearInterval(timer);
    };
  }, []);

  const shown = repositories.filter((name) => name.includes(filter.trim().toLowerCase()));
  if (error) return <p className="error">Could not list repositories: {error}</p>;
  if (shown.length === 0) return <p className="empty">No repositories match "{filter}".</p>;

  return (
    <ul className="repository-list">
      {shown.map((name) => (
        <li key={name}>
          <button type="button" onClick={() => onSelect(name)}>
            {name}
          </button>
        </li>
      ))}
    </ul>
  );
}
