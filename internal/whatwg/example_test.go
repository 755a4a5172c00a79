package whatwg_test

import (
	"fmt"

	"github.com/agentmcp/agentmcp/internal/whatwg"
)

func ExampleParse() {
	u, err := whatwg.Parse("HTTPS://MCP.Example.com:443/a/../mcp?x=1")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Scheme, u.Host, u.Port == "", u.Path, u.Query)
	fmt.Println(u.Href())
	// Output:
	// https mcp.example.com true /mcp x=1
	// https://mcp.example.com/mcp?x=1
}

func ExampleNormalize() {
	for _, s := range []string{
		"http://0x7f.1/m cp",
		"https://bücher.example",
		"http://[::ffff:10.0.0.1]/",
	} {
		n, err := whatwg.Normalize(s)
		fmt.Println(n, err)
	}
	// Output:
	// http://127.0.0.1/m%20cp <nil>
	// https://xn--bcher-kva.example/ <nil>
	// http://[::ffff:a00:1]/ <nil>
}
