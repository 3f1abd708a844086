import { isIP } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { checkUrl, isPublicAddress, type Resolve, UnsafeUrlError } from "../src/modules/webhooks/ssrf.js";
import { cloudInternalHosts } from "./helpers/cloud-metadata.js";

const nonPublic = [
  // IPv4
  "0.0.0.0",
  "0.1.2.3",
  "10.0.0.1",
  "10.255.255.255",
  "100.64.0.1",
  "100.100.100.200",
  "100.127.255.254",
  "127.0.0.1",
  "127.255.255.254",
  "169.254.0.1",
  "169.254.169.254",
  "172.16.0.1",
  "172.31.255.255",
  "192.0.0.8",
  "192.0.0.192",
  "192.0.2.1",
  "192.88.99.1",
  "192.168.0.1",
  "192.168.255.255",
  "198.18.0.1",
  "198.19.255.255",
  "198.51.100.7",
  "203.0.113.9",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  // IPv6
  "::",
  "::1",
  "::7f00:1", // IPv4-compatible 127.0.0.1
  "fc00::1",
  "fd00::1",
  "fd00:ec2::254",
  "fe80::1",
  "febf:ffff::1",
  "fec0::1",
  "ff02::1",
  "ff0e::1",
  "100::1",
  "2001:db8::1",
  "2001::1", // Teredo
  "2001:2::1", // benchmarking
  "2002:7f00:1::1", // 6to4 of 127.0.0.1
  "3fff::1",
  "64:ff9b:1::1", // local-use NAT64
  "4000::1", // outside global unicast
  // IPv4-mapped and NAT64 forms of the IPv4 classes
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::ffff:10.0.0.1",
  "::ffff:169.254.169.254",
  "::ffff:100.64.0.1",
  "::ffff:172.16.0.1",
  "::ffff:192.168.1.1",
  "::ffff:0.0.0.0",
  "::ffff:255.255.255.255",
  "::ffff:224.0.0.1",
  "::ffff:198.51.100.1",
  "64:ff9b::127.0.0.1",
  "64:ff9b::a00:1",
  "64:ff9b::169.254.169.254",
];

const publicAddresses = [
  "1.1.1.1",
  "8.8.8.8",
  "9.255.255.255",
  "11.0.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "126.255.255.255",
  "128.0.0.0",
  "169.253.255.255",
  "172.15.255.255",
  "172.32.0.0",
  "192.0.1.1",
  "192.167.255.255",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "2001:4860:4860::8888",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "64:ff9b::8.8.8.8",
];

describe("which addresses are public", () => {
  it.each(nonPublic)("%s is not public", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(publicAddresses)("%s is public", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it("an address that is not an IP address is not public", () => {
    expect(isPublicAddress("example.com")).toBe(false);
    expect(isPublicAddress("")).toBe(false);
  });
});

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UnsafeUrlError) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error("the URL was accepted");
};

/** A resolver we control, counting its calls; names it does not know fail as DNS would. */
const resolverFor = (table: Record<string, string[]>) => {
  const calls: string[] = [];
  const resolve: Resolve = async (hostname) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, calls };
};

describe("checkUrl", () => {
  const guarded = { allowPrivate: false };

  it.each([
    "http://127.0.0.1/hook",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]:8080/",
    "http://[::]/",
    "http://0.0.0.0:8000/",
    "http://10.0.0.1/",
    "https://172.16.5.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://[fe80::1]/",
    "http://[fd12:3456::1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://255.255.255.255/",
    "http://224.0.0.1/",
    "http://198.51.100.1/",
  ])("refuses %s", async (url) => {
    expect(await refusal(checkUrl(url, guarded))).toEqual({
      reason: "non_public",
      message: "url resolves to a loopback, private or otherwise non-public address",
    });
  });

  it("refuses localhost, resolved by the system resolver", async () => {
    expect(await refusal(checkUrl("http://localhost:8000/hook", guarded))).toMatchObject({ reason: "non_public" });
  });

  it("refuses a name that resolves to a private address, or to any private address among public ones", async () => {
    const { resolve, calls } = resolverFor({
      "hooks.internal.test": ["10.1.2.3"],
      "mixed.test": ["93.184.216.34", "2606:2800:220:1::1", "::ffff:192.168.0.10"],
      "metadata.test": ["169.254.169.254"],
    });
    for (const url of ["https://hooks.internal.test/x", "http://mixed.test/", "http://metadata.test/"]) {
      expect(await refusal(checkUrl(url, { ...guarded, resolve }))).toMatchObject({ reason: "non_public" });
    }
    expect(calls).toEqual(["hooks.internal.test", "mixed.test", "metadata.test"]);
  });

  it("accepts a public name and returns every checked address, host name and URL", async () => {
    const { resolve } = resolverFor({ "hooks.example.test": ["93.184.216.34", "2606:2800:220:1::1"] });
    const checked = await checkUrl("https://hooks.example.test:8443/in?x=1", { ...guarded, resolve });
    expect(checked.url.href).toBe("https://hooks.example.test:8443/in?x=1");
    expect(checked.hostname).toBe("hooks.example.test");
    expect(checked.addresses).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
  });

  it("accepts a public literal without resolving it, IPv6 without brackets", async () => {
    const { resolve, calls } = resolverFor({});
    expect((await checkUrl("http://8.8.8.8/", { ...guarded, resolve })).addresses).toEqual([
      { address: "8.8.8.8", family: 4 },
    ]);
    const v6 = await checkUrl("http://[2606:4700:4700::1111]:81/", { ...guarded, resolve });
    expect(v6.hostname).toBe("2606:4700:4700::1111");
    expect(v6.addresses).toEqual([{ address: "2606:4700:4700::1111", family: 6 }]);
    expect(calls).toEqual([]);
  });

  it.each([
    ["file:///etc/passwd", "scheme"],
    ["ftp://example.com/", "scheme"],
    ["gopher://example.com/", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["data:text/plain,hi", "scheme"],
    ["ws://example.com/", "scheme"],
    ["not a url", "invalid"],
    ["", "invalid"],
    ["http://", "invalid"],
    ["http://user:pass@example.com/", "credentials"],
    ["https://token@example.com/", "credentials"],
    ["http://example.com:25/", "port"],
    ["https://example.com:6667/", "port"],
    ["http://[2606:4700:4700::1111]:10080/", "port"],
  ])("refuses %s (%s)", async (url, reason) => {
    expect(await refusal(checkUrl(url, { allowPrivate: true }))).toMatchObject({ reason });
  });

  it("takes the usual ports, and any the Fetch standard does not block", async () => {
    const { resolve } = resolverFor({ "example.test": ["93.184.216.34"] });
    for (const url of [
      "http://example.test:80/",
      "https://example.test/",
      "http://example.test:8080/",
      "http://example.test:24/",
    ]) {
      expect((await checkUrl(url, { ...guarded, resolve })).url.href).toBe(new URL(url).href);
    }
  });

  it("takes URLs up to 2000 characters", async () => {
    const { resolve } = resolverFor({ "example.test": ["93.184.216.34"] });
    const base = "https://example.test/";
    const longest = base + "a".repeat(2000 - base.length);
    expect((await checkUrl(longest, { ...guarded, resolve })).url.href).toBe(longest);
    expect(await refusal(checkUrl(`${longest}a`, { ...guarded, resolve }))).toEqual({
      reason: "too_long",
      message: "url is longer than 2000 characters",
    });
  });

  it("refuses a host that does not resolve, or resolves to nothing", async () => {
    const { resolve } = resolverFor({ "empty.test": [] });
    expect(await refusal(checkUrl("http://nowhere.test/", { allowPrivate: true, resolve }))).toMatchObject({
      reason: "unresolvable",
    });
    expect(await refusal(checkUrl("http://empty.test/", { allowPrivate: true, resolve }))).toMatchObject({
      reason: "unresolvable",
    });
  });

  it("gives up on a resolver slower than the signal allows", async () => {
    const hang: Resolve = () => new Promise(() => {});
    const started = Date.now();
    await expect(
      checkUrl("http://slow.test/", { allowPrivate: false, resolve: hang, signal: AbortSignal.timeout(200) }),
    ).rejects.toMatchObject({ name: "TimeoutError" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("with WEBHOOK_ALLOW_PRIVATE, accepts private addresses and still returns what they resolved to", async () => {
    const checked = await checkUrl("http://localhost:8080/", { allowPrivate: true });
    expect(checked.addresses.length).toBeGreaterThan(0);
    for (const { address } of checked.addresses) expect(isPublicAddress(address)).toBe(false);
    expect((await checkUrl("http://[::1]:8080/", { allowPrivate: true })).addresses).toEqual([
      { address: "::1", family: 6 },
    ]);
  });
});

describe("cloud metadata and host-internal endpoints", () => {
  // Without WEBHOOK_ALLOW_PRIVATE an address is refused as non-public, like a private one; a name, by its name.
  it.each(cloudInternalHosts)(
    "refuses %s (%s), with or without WEBHOOK_ALLOW_PRIVATE, resolving nothing",
    async (host) => {
      const { resolve, calls } = resolverFor({});
      const url = `http://${host}/latest/meta-data/`;
      expect(await refusal(checkUrl(url, { allowPrivate: true, resolve }))).toEqual({
        reason: "cloud_internal",
        message: "url is or resolves to a cloud metadata or host-internal address, which is never called",
      });
      const literal = isIP(new URL(url).hostname.replace(/^\[(.*)\]$/, "$1")) !== 0;
      expect(await refusal(checkUrl(url, { allowPrivate: false, resolve }))).toMatchObject({
        reason: literal ? "non_public" : "cloud_internal",
      });
      expect(calls).toEqual([]);
    },
  );

  it("refuses a name that resolves to one, alone or among other addresses, with WEBHOOK_ALLOW_PRIVATE", async () => {
    const { resolve, calls } = resolverFor({
      "imds.test": ["169.254.169.254"],
      "wire.test": ["127.0.0.1", "168.63.129.16"],
      "v6.test": ["93.184.216.34", "fd20:ce::254"],
      "mapped.test": ["::ffff:100.100.100.200"],
    });
    for (const host of ["imds.test", "wire.test", "v6.test", "mapped.test"]) {
      expect(await refusal(checkUrl(`http://${host}/`, { allowPrivate: true, resolve }))).toMatchObject({
        reason: "cloud_internal",
      });
    }
    expect(calls).toEqual(["imds.test", "wire.test", "v6.test", "mapped.test"]);
  });

  it("are not public addresses, and names that merely contain a metadata name are judged by address", async () => {
    for (const address of ["168.63.129.16", "169.254.170.2", "fd20:ce::254", "fd00:c1::a9fe:a9fe", "fd00:42::42"]) {
      expect(isPublicAddress(address)).toBe(false);
    }
    const { resolve } = resolverFor({ "metadata.example.test": ["93.184.216.34"] });
    expect((await checkUrl("http://metadata.example.test/", { allowPrivate: false, resolve })).addresses).toEqual([
      { address: "93.184.216.34", family: 4 },
    ]);
  });
});

describe("WEBHOOK_ALLOW_PRIVATE", () => {
  it("is off unless set to a true value; anything else is one line naming it", () => {
    expect(loadConfig({}).webhooks.allowPrivate).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).webhooks.allowPrivate).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "false" }).webhooks.allowPrivate).toBe(false);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "sometimes" })).toThrow(
      /^Invalid configuration: WEBHOOK_ALLOW_PRIVATE [^\n]+$/,
    );
  });
});
