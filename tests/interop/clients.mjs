// Browser bundle entry (built by server.mjs with esbuild, served at
// /__interop/clients.js): foreign GraphQL clients for cachet's interop tests.
//
// window.interop = { log, urql, apollo, graphqlRequest }
//   <client>.query(query, variables = {}, headers = {})   -> { data, errors }
//   <client>.mutate(mutation, variables = {}, headers = {}) -> { data, errors }
// errors is an array of messages or null; the promise never rejects.
//
// Every call builds a NEW client with the library's defaults (like a page
// reload, so no in-memory client cache hides the network), except the URL
// /graphql, the given headers and a logging fetch.

import { Client as UrqlClient, cacheExchange, fetchExchange } from '@urql/core';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLClient } from 'graphql-request';

// Arguments may come from another realm (a WebDriver script's sandbox in Firefox): copied into this
// page's realm, as an app's own objects are. urql serializes an empty object of another realm as
// `{"__key": <random>}`, which made each query a new one.
const own = (value) => JSON.parse(JSON.stringify(value ?? {}));


const log = [];

function messageOf(err) {
  if (err && typeof err.message === 'string' && err.message) return err.message;
  return String(err);
}

function loggingFetch(client) {
  return async (input, init) => {
    const isRequest = typeof Request !== 'undefined' && input instanceof Request;
    const method = (init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
    const url = isRequest ? input.url : String(input);
    let response;
    try {
      response = await window.fetch(input, init);
    } catch (err) {
      log.push({ client, method, url, status: 0, source: null, notStored: null, contentType: null, error: messageOf(err) });
      throw err;
    }
    log.push({
      client,
      method,
      url: response.url || url,
      status: response.status,
      source: response.headers.get('x-cachet-source'),
      notStored: response.headers.get('x-cachet-not-stored'),
      contentType: response.headers.get('content-type'),
    });
    return response;
  };
}

function normalize(data, errors) {
  const list = Array.isArray(errors) && errors.length ? errors.map(messageOf) : null;
  return { data: data ?? null, errors: list };
}

// --- urql --------------------------------------------------------------------

function urqlClient(headers) {
  return new UrqlClient({
    url: '/graphql',
    exchanges: [cacheExchange, fetchExchange],
    fetch: loggingFetch('urql'),
    fetchOptions: { headers },
  });
}

function fromUrql(result) {
  const error = result.error;
  if (!error) return normalize(result.data, null);
  const errors = [...(error.graphQLErrors ?? [])];
  if (error.networkError) errors.push(error.networkError);
  if (!errors.length) errors.push(error);
  return normalize(result.data, errors);
}

const urql = {
  async query(query, variables = {}, headers = {}) {
    try {
      return fromUrql(await urqlClient(own(headers)).query(query, own(variables)).toPromise());
    } catch (err) {
      return normalize(null, [err]);
    }
  },
  async mutate(mutation, variables = {}, headers = {}) {
    try {
      return fromUrql(await urqlClient(own(headers)).mutation(mutation, own(variables)).toPromise());
    } catch (err) {
      return normalize(null, [err]);
    }
  },
};

// --- Apollo Client 4 -----------------------------------------------------------

function apolloClient(headers) {
  return new ApolloClient({
    link: new HttpLink({ uri: '/graphql', fetch: loggingFetch('apollo'), headers }),
    cache: new InMemoryCache(),
  });
}

function fromApolloError(err) {
  // CombinedGraphQLErrors: GraphQL errors in a (possibly non-2xx) response.
  if (Array.isArray(err?.errors) && err.errors.length) return normalize(err.data, err.errors);
  // ServerError: non-2xx response; keep the body's GraphQL error messages if any.
  if (typeof err?.bodyText === 'string') {
    try {
      const body = JSON.parse(err.bodyText);
      if (Array.isArray(body?.errors) && body.errors.length) return normalize(body.data, body.errors);
    } catch {
      // not JSON
    }
  }
  return normalize(null, [err]);
}

function fromApollo(result) {
  const errors = result.error
    ? Array.isArray(result.error.errors) ? result.error.errors : [result.error]
    : null;
  return normalize(result.data, errors);
}

const apollo = {
  async query(query, variables = {}, headers = {}) {
    try {
      return fromApollo(await apolloClient(own(headers)).query({ query: gql(query), variables: own(variables) }));
    } catch (err) {
      return fromApolloError(err);
    }
  },
  async mutate(mutation, variables = {}, headers = {}) {
    try {
      return fromApollo(await apolloClient(own(headers)).mutate({ mutation: gql(mutation), variables: own(variables) }));
    } catch (err) {
      return fromApolloError(err);
    }
  },
};

// --- graphql-request -----------------------------------------------------------

function graphqlRequestClient(headers) {
  return new GraphQLClient(new URL('/graphql', location.href).href, {
    fetch: loggingFetch('graphql-request'),
    headers,
  });
}

async function viaGraphqlRequest(document, variables, headers) {
  try {
    const result = await graphqlRequestClient(own(headers)).rawRequest(document, own(variables));
    return normalize(result.data, result.errors);
  } catch (err) {
    // ClientError carries the parsed response (GraphQL errors or HTTP failure).
    const response = err?.response;
    if (Array.isArray(response?.errors) && response.errors.length) return normalize(response.data, response.errors);
    return normalize(null, [err]);
  }
}

const graphqlRequest = {
  query: (query, variables = {}, headers = {}) => viaGraphqlRequest(query, variables, headers),
  mutate: (mutation, variables = {}, headers = {}) => viaGraphqlRequest(mutation, variables, headers),
};

window.interop = { log, urql, apollo, graphqlRequest };
