package netguard_test

import (
	"errors"
	"fmt"

	"github.com/agentmcp/agentmcp/netguard"
)

func ExampleGuard_CheckURL() {
	guard, err := netguard.New(nil, nil) // the default policy
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://mcp.example.com/mcp",
		"http://localhost:8080/mcp",
		"http://0x0a000001/mcp",
		"https://user:pw@[::ffff:169.254.169.254]/latest?token=x",
		"ftp://example.com/",
	} {
		err := guard.CheckURL(u)
		switch {
		case err == nil:
			fmt.Println("allowed:", u)
		case errors.Is(err, netguard.ErrBlockedURL):
			fmt.Println(err)
		default:
			fmt.Println("error:", err)
		}
	}
	// Output:
	// allowed: https://mcp.example.com/mcp
	// allowed: http://localhost:8080/mcp
	// Blocked URL: http://10.0.0.1/mcp — MCP client connections to private/internal addresses are not allowed (10.0.0.1 is a private address)
	// Blocked URL: https://[::ffff:a9fe:a9fe]/latest — MCP client connections to private/internal addresses are not allowed ([::ffff:a9fe:a9fe] is IPv4-mapped 169.254.169.254, a cloud metadata address)
	// error: netguard: unsupported URL scheme "ftp": MCP servers are reached over http, https, ws or wss
}

func ExamplePolicy() {
	// An internal deployment: private networks are fine, one noisy range
	// is not, and the local machine is off limits.
	guard, err := netguard.New(&netguard.Policy{
		AllowPrivate:  true,
		BlockLoopback: true,
		Block:         []string{"10.99.0.0/16"},
	}, nil)
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"http://10.1.2.3/mcp",
		"http://10.99.1.1/mcp",
		"http://127.0.0.1:3000/mcp",
		"http://169.254.169.254/",
	} {
		fmt.Println(u, guard.CheckURL(u) == nil)
	}
	// Output:
	// http://10.1.2.3/mcp true
	// http://10.99.1.1/mcp false
	// http://127.0.0.1:3000/mcp false
	// http://169.254.169.254/ false
}

func ExampleSanitize() {
	fmt.Printf("%q\n", netguard.Sanitize("invalid_grant\x1b[31m: code\x00 expired\r\n"))
	// Output:
	// "invalid_grant[31m: code expired\r\n"
}

func ExampleRedactURL() {
	fmt.Println(netguard.RedactURL("https://alice:secret@MCP.example.com:443/mcp?api_key=k#x"))
	// Output:
	// https://mcp.example.com/mcp
}
