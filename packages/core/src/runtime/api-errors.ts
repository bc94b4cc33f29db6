import { ApiException } from '@kubernetes/client-node';

export const isConflict = (e: unknown): boolean => e instanceof ApiException && e.code === 409;
export const isNotFound = (e: unknown): boolean => e instanceof ApiException && e.code === 404;
/**
 * 403 from the NamespaceLifecycle admission plugin: the namespace is being deleted, so nothing
 * new can be created in it. A race with deletion, not a permission problem.
 */
export const isNamespaceTerminating = (e: unknown): boolean =>
  e instanceof ApiException &&
  e.code === 403 &&
  /NamespaceTerminating|because it is being terminated/.test(
    typeof e.body === 'string' ? e.body : JSON.stringify(e.body ?? ''),
  );
