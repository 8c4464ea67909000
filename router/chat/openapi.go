package chat

import _ "embed"

// OpenAPI is the OpenAPI 3.0 document of the surface, served at
// GET /openapi.json. It is generated data: edit the paths and schemas there
// together with the handlers, and the tests validate every response
// against it.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) openapi(c *call) error {
	c.ctx.SetStatusCode(200)
	c.ctx.SetContentType("application/json")
	c.ctx.SetBody(OpenAPI)
	return nil
}
