package registry

// CachedSchemas is how many schema ids c holds outcomes of.
func (c *Client) CachedSchemas() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byID.m)
}
