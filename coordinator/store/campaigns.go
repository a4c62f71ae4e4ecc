package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/writepath/writepath/internal/echo"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// PutCampaign writes (creates or replaces) a campaign record: its plan and
// progress travel together, so one commit moves a campaign from one
// consistent state to the next.
func (s *Store) PutCampaign(c *writepathv1.Campaign) error {
	if c.GetId() == "" {
		return fmt.Errorf("put campaign: empty id")
	}
	err := s.update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bucketCampaigns), []byte(c.GetId()), c)
	})
	if err != nil {
		return fmt.Errorf("put campaign %s: %w", c.GetId(), err)
	}
	return nil
}

// GetCampaign reads a campaign record.
func (s *Store) GetCampaign(id string) (*writepathv1.Campaign, error) {
	c := &writepathv1.Campaign{}
	err := s.view(func(tx *bolt.Tx) error {
		return get(tx.Bucket(bucketCampaigns), []byte(id), c)
	})
	if err != nil {
		return nil, fmt.Errorf("campaign %s: %w", echo.Clip(id), err)
	}
	return c, nil
}

// ListCampaigns returns campaigns newest first; limit <= 0 returns all.
func (s *Store) ListCampaigns(limit int) ([]*writepathv1.Campaign, error) {
	var out []*writepathv1.Campaign
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCampaigns)
		c := b.Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			if limit > 0 && len(out) >= limit {
				break
			}
			m := &writepathv1.Campaign{}
			if err := get(b, k, m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	return out, nil
}
