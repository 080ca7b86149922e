// Asking about oneself, as kubectl asks (src/auth/rbac/reviews.ts answers): `kubectl auth can-i`
// (SelfSubjectAccessReview), `kubectl auth can-i --list` (SelfSubjectRulesReview) and `kubectl auth
// whoami` (SelfSubjectReview), also `fencer auth can-i`. Every authenticated user may ask
// (system:basic-user); the answer reads the replica's policy in memory. Registered in kubeRoutes'
// plugin, so refusals are Status objects.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.js';
import type { Access } from '../auth-gate.js';
import { jsonObject } from '../body.js';
import {
  accessReview,
  rulesReview,
  selfSubjectReview,
  type SelfSubjectAccessReviewSpec,
} from '../../auth/rbac/reviews.js';
import { EMPTY_POLICY, type Policy } from '../../domain/rbac.js';
import { ValidationError } from '../../errors/validation-error.js';
import { accessReviewSpecOf, rulesReviewSpecOf } from '../kube/protobuf.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

const creates = (apiGroup: string, resource: string) => (): Access => ({ verb: 'create', apiGroup, resource });

export function reviewRoutes(kube: FastifyInstance, ctx: ApiContext): void {
  const policy = (): Policy => (ctx.gate === 'insecure-no-auth' ? EMPTY_POLICY : ctx.gate.policy);
  // kubectl sends its reviews as protobuf (src/api/kube/protobuf.ts), other clients as JSON.
  const specOf = (request: FastifyRequest, protobuf: (body: Buffer) => Record<string, unknown>) =>
    Buffer.isBuffer(request.body)
      ? protobuf(request.body)
      : ((jsonObject(request.body).spec ?? {}) as Record<string, unknown>);

  kube.post(
    `/apis/${AUTHORIZATION_GROUP}/v1/selfsubjectaccessreviews`,
    { config: { access: creates(AUTHORIZATION_GROUP, 'selfsubjectaccessreviews') } },
    async (request, reply) => {
      void reply.code(201);
      return accessReview(request.user!, specOf(request, accessReviewSpecOf) as SelfSubjectAccessReviewSpec, policy());
    },
  );

  kube.post(
    `/apis/${AUTHORIZATION_GROUP}/v1/selfsubjectrulesreviews`,
    { config: { access: creates(AUTHORIZATION_GROUP, 'selfsubjectrulesreviews') } },
    async (request, reply) => {
      const namespace = specOf(request, rulesReviewSpecOf).namespace;
      if (typeof namespace !== 'string' || namespace === '')
        throw new ValidationError([
          { path: 'spec.namespace', message: 'Required value: the namespace to list the rules of' },
        ]);
      void reply.code(201);
      return rulesReview(request.user!, namespace, policy());
    },
  );

  for (const version of ['v1', 'v1beta1']) {
    kube.post(
      `/apis/${AUTHENTICATION_GROUP}/${version}/selfsubjectreviews`,
      { config: { access: creates(AUTHENTICATION_GROUP, 'selfsubjectreviews') } },
      async (request, reply) => {
        void reply.code(201);
        return { ...selfSubjectReview(request.user!), apiVersion: `${AUTHENTICATION_GROUP}/${version}` };
      },
    );
  }
}
