import { sourceAddress } from '../http/access-control.js';
import { actorOf, defineRoute, type AnyRoute } from '../http/routes.js';
import type { UserService } from '../auth/user-service.js';
import { changePasswordBody, credentialsBody, meSchema, sessionSchema } from './user.schemas.js';

export function authRoutes(users: UserService): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/auth/setup',
      operationId: 'setupFirstAdmin',
      permission: 'public',
      summary: 'Create the first user, an admin, and log it in; 403 once any user exists',
      tag: 'auth',
      body: credentialsBody,
      response: sessionSchema,
      errors: [403],
      handler: ({ body, req }) => users.setup(body, sourceAddress(req)),
    }),
    defineRoute({
      method: 'post',
      path: '/auth/login',
      operationId: 'login',
      permission: 'public',
      summary: 'Exchange a username and password for a token; failed attempts are throttled per username and per address',
      tag: 'auth',
      body: credentialsBody,
      response: sessionSchema,
      errors: [401, 429],
      handler: ({ body, req }) => users.login(body, sourceAddress(req)),
    }),
    defineRoute({
      method: 'post',
      path: '/auth/change-password',
      operationId: 'changePassword',
      permission: 'authenticated',
      summary: "Change the caller's password; earlier tokens stop working and a new one is returned",
      tag: 'auth',
      body: changePasswordBody,
      response: sessionSchema,
      errors: [401],
      handler: (ctx) => users.changePassword(actorOf(ctx), ctx.body.currentPassword, ctx.body.newPassword),
    }),
    defineRoute({
      method: 'get',
      path: '/auth/me',
      operationId: 'getCurrentUser',
      permission: 'authenticated',
      summary: 'Who the caller is: principal and role, and the stored user for built-in users',
      tag: 'auth',
      response: meSchema,
      errors: [401],
      handler: (ctx) => users.me(actorOf(ctx)),
    }),
  ];
}
