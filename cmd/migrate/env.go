package main

import (
	"fmt"
	"os"
	"strings"
)

// pgURL returns the flag value or the environment's.
func pgURL(flag string) string {
	u, _ := pgURLFrom(flag)
	return u
}

// pgURLFrom returns the source URL and where it came from: "flag",
// "MIGRATE_PG_URL" or "DATABASE_URL".
func pgURLFrom(flag string) (string, string) {
	if flag != "" {
		return flag, "flag"
	}
	for _, env := range []string{"MIGRATE_PG_URL", "DATABASE_URL"} {
		if v := os.Getenv(env); v != "" {
			return v, env
		}
	}
	return "", ""
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}
