// proxy-addr (express's own dependency) ships no types; these are the two calls used here.
declare module "proxy-addr" {
  import type { IncomingMessage } from "node:http";

  type Trust = (address: string, hop: number) => boolean;
  function proxyaddr(req: IncomingMessage, trust: Trust): string;
  namespace proxyaddr {
    function compile(value: string | string[]): Trust;
  }
  export = proxyaddr;
}
