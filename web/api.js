// The only way the client talks HTTP to the server: the routes and error
// shape of the public contract (docs/API.md).

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, { body, token } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'Cannot reach the server. Check your connection.');
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data && data.error;
    throw new ApiError(
      response.status,
      (error && error.code) || `http_${response.status}`,
      (error && error.message) || response.statusText || 'Request failed',
    );
  }
  return data;
}

let levelsPromise = null;

// The AI levels rarely change; one request per page load is enough. A failure
// yields an empty list so pages still render (levels then show by number).
export function loadLevels() {
  if (!levelsPromise) {
    levelsPromise = api('GET', '/api/levels').then(
      (levels) => (Array.isArray(levels) ? levels : []),
      () => [],
    );
  }
  return levelsPromise;
}
