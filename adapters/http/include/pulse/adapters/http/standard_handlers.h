// Handlers for the server routes that need nothing but the core's pure tables and the metrics
// registry: the manifest, health, metrics and the workflow-prompt renderer. The server wiring
// binds them by name (router.Handle("get_capabilities", ManifestHandler())). Thread-safe.
#pragma once

#include "pulse/adapters/http/http_types.h"
#include "pulse/adapters/http/metrics_registry.h"

namespace pulse::adapters::http {

// GET /api/agent/capabilities: core::ManifestJson() with Cache-Control: public, max-age=300.
HttpHandler ManifestHandler();

// GET /healthz: {"status":"ok"}.
HttpHandler HealthHandler();

// GET /metrics: registry.Render() as Prometheus text. Borrows the registry.
HttpHandler MetricsHandler(const MetricsRegistry& registry);

// POST /api/ai/workflow-prompts/render with {name, arguments?} (already schema-checked):
// {description, text}; an unknown prompt or a missing or invalid argument is 400
// invalid_request with the renderer's message.
HttpHandler RenderWorkflowPromptHandler();

}  // namespace pulse::adapters::http
