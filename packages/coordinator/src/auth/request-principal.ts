import type { Response } from 'express';
import { ANONYMOUS, type Principal } from './principal.js';

/**
 * The principal the authentication step found for a request, kept on the response's locals.
 * Until that step runs (auth `none`), every request is ANONYMOUS.
 */
export function setPrincipal(res: Response, principal: Principal): void {
  res.locals.principal = principal;
}

export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? ANONYMOUS;
}
