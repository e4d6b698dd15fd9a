/**
 * The page's only way to mediagen: the server extension's handlers, through Jupyter's own
 * ServerConnection (its token and XSRF header). The API key never comes this way.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

const settings = ServerConnection.makeSettings();

export function apiUrl(path: string): string {
  return URLExt.join(settings.baseUrl, 'mediagen', 'api', path);
}

/** An output's bytes, served by the server extension from its own copy of the file. */
export function mediaUrl(generationId: string, index: number): string {
  return apiUrl(`media/${encodeURIComponent(generationId)}/${index}`);
}

export async function requestAPI<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await ServerConnection.makeRequest(apiUrl(path), init, settings);
  if (!response.ok) {
    throw new ServerConnection.ResponseError(response);
  }
  const text = await response.text();
  return (text ? JSON.parse(text) : null) as T;
}
