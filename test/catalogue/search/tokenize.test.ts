import { describe, expect, it } from 'vitest';
import { identifierWords, stem, tokenize } from '../../../src/catalogue/search/tokenize.js';

describe('identifierWords', () => {
  it.each([
    ['create_pull_request', ['create', 'pull', 'request']],
    ['createPullRequest', ['create', 'pull', 'request']],
    ['create-pull-request', ['create', 'pull', 'request']],
    ['github__create_pull_request', ['github', 'create', 'pull', 'request']],
    ['pull_requests.merge', ['pull', 'requests', 'merge']],
    ['k8s.pods-list', ['k8s', 'pods', 'list']],
    ['listK8sPods', ['list', 'k8s', 'pods']],
    ['listS3Buckets', ['list', 's3', 'buckets']],
    ['ec2Instance', ['ec2', 'instance']],
    ['HTMLParser', ['html', 'parser']],
    ['getHTTPResponse', ['get', 'http', 'response']],
    ['CONSTANT_CASE_NAME', ['constant', 'case', 'name']],
    ['repo/path:line', ['repo', 'path', 'line']],
    ['browser_take_screenshot', ['browser', 'take', 'screenshot']],
    ['', []],
  ])('splits %j into %j', (identifier, expected) => {
    expect(identifierWords(identifier)).toEqual(expected);
  });
});

describe('stem', () => {
  it.each([
    ['issues', 'issue'],
    ['creating', 'create'],
    ['created', 'creates'],
    ['repositories', 'repository'],
    ['branches', 'branch'],
    ['running', 'run'],
    ['deployments', 'deployment'],
  ])('gives %j and %j the same stem', (a, b) => {
    expect(stem(a)).toBe(stem(b));
  });

  it.each(['status', 'process', 'string', 'k8s', 's3', 'git'])('leaves %j whole', (word) => {
    expect(stem(word)).toBe(word);
  });
});

describe('tokenize', () => {
  it('drops function words so a conversational query keeps only its content', () => {
    expect(tokenize('Can you please create a pull request from my branch?')).toEqual(['creat', 'pull', 'request', 'branch']);
  });

  it('adds the whole identifier as one term, the same for every naming style', () => {
    const whole = '~createpullrequest';
    expect(tokenize('create_pull_request')).toContain(whole);
    expect(tokenize('createPullRequest')).toContain(whole);
    expect(tokenize('create-pull-request')).toContain(whole);
    expect(tokenize('gh__create_pull_request')).toEqual(expect.arrayContaining(['~ghcreatepullrequest', whole]));
  });

  it('keeps single words single', () => {
    expect(tokenize('Screenshot')).toEqual(['screenshot']);
  });

  it('drops runs too long to be words (hashes, base64)', () => {
    expect(tokenize(`digest ${'a'.repeat(300)} end`)).toEqual(['digest', 'end']);
  });
});
