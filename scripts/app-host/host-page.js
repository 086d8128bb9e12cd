// The test host's page script: the official MCP Apps host bridge
// (AppBridge) and its postMessage transport, bundled by host.mjs with
// esbuild into one inline script, so the host page loads nothing either.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.AppBridge = AppBridge;
window.PostMessageTransport = PostMessageTransport;
