//! Building a [`Model`] from a URDF file, the way Pinocchio's URDF parser does: joints in
//! depth-first order, the child joints of a link sorted by name (urdfdom keeps joints in a
//! name-ordered map: the Allegro hand's thumb `joint_12.0` comes before `joint_4.0`), fixed joints merged into their parent body
//! (their frames kept), one `Body` frame per link, inertias and collision geometry expressed
//! in the frame of the moving joint that carries them. The file is read by [`document`]
//! (one pass over its elements, every value checked and located); building the tree is
//! one more pass, so loading is linear in the file.

mod document;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use nalgebra::{Isometry3, Unit};

use super::{
    xml, CollisionGeometry, Frame, FrameKind, GeometryShape, Inertia, JointKind, Model, ModelError,
    RootJoint,
};
use document::{Document, Geometry, JointType};
pub use document::{GEOMETRY_RANGE, MAX_ORIGIN};

/// Largest URDF file read (bytes): Talos's is 70 kB.
pub const MAX_URDF_BYTES: u64 = 64 << 20;

impl Model {
    /// Loads a URDF file. Mesh URIs (`package://pkg/rest`, `file://`, relative paths) are
    /// resolved against the URDF's ancestor directories and must exist.
    pub fn from_urdf(path: impl AsRef<Path>, root: RootJoint) -> Result<Model, ModelError> {
        Model::from_urdf_with_packages(path, root, &[])
    }

    /// Loads a URDF file; `package://pkg/rest` URIs are looked up first as `DIR/pkg/rest` for
    /// every `DIR` of `package_dirs`, then against the URDF's ancestor directories.
    pub fn from_urdf_with_packages(
        path: impl AsRef<Path>,
        root: RootJoint,
        package_dirs: &[PathBuf],
    ) -> Result<Model, ModelError> {
        let file = path.as_ref().to_path_buf();
        let text = super::read_text(&file, MAX_URDF_BYTES).map_err(|error| ModelError::Io {
            file: file.clone(),
            error,
        })?;
        let elements = xml::elements(&text).map_err(|message| ModelError::MalformedUrdf {
            file: file.clone(),
            message,
        })?;
        let robot = document::read(&elements, &file)?;
        drop(elements);
        let mut builder = UrdfBuilder {
            file: &file,
            robot: &robot,
            package_dirs,
        };
        builder.build(root)
    }
}

struct UrdfBuilder<'a> {
    file: &'a Path,
    robot: &'a Document,
    package_dirs: &'a [PathBuf],
}

/// A link waiting to be visited: the joint through which it is reached (None for the root),
/// the moving joint that carries it, and its placement in that joint's frame.
struct Visit {
    via: Option<usize>,
    link: usize,
    parent_joint: usize,
    placement: Isometry3<f64>,
}

impl UrdfBuilder<'_> {
    fn build(&mut self, root: RootJoint) -> Result<Model, ModelError> {
        let links = &self.robot.links;
        let index: HashMap<&str, usize> = links
            .iter()
            .enumerate()
            .map(|(k, link)| (link.name.as_str(), k))
            .collect();
        let (children, root_link) = self.tree(&index)?;
        let mut model = Model::empty(&self.robot.name);
        let mut stack = vec![Visit {
            via: None,
            link: root_link,
            parent_joint: 0,
            placement: Isometry3::identity(),
        }];
        if root == RootJoint::FreeFlyer {
            let inf = f64::INFINITY;
            let j = model.add_joint(
                "root_joint",
                JointKind::FreeFlyer,
                0,
                Isometry3::identity(),
                [
                    &[-inf, -inf, -inf, -1.0, -1.0, -1.0, -1.0],
                    &[inf, inf, inf, 1.0, 1.0, 1.0, 1.0],
                    &[inf; 6],
                    &[inf; 6],
                ],
            );
            model.frames.push(joint_frame("root_joint", j));
            stack[0].parent_joint = j;
        }
        let mut visited = 0usize;
        while let Some(visit) = stack.pop() {
            visited += 1;
            let (parent_joint, placement) = match visit.via {
                None => (visit.parent_joint, visit.placement),
                Some(j) => self.add_urdf_joint(&mut model, j, &visit)?,
            };
            self.add_link(&mut model, visit.link, parent_joint, &placement)?;
            for &j in children[visit.link].iter().rev() {
                let child = index[self.robot.joints[j].child.as_str()];
                stack.push(Visit {
                    via: Some(j),
                    link: child,
                    parent_joint,
                    placement,
                });
            }
        }
        self.check_moving_joints(&model)?;
        if visited != links.len() {
            return Err(self.not_a_tree(format!(
                "{} link(s) are not reachable from the root link '{}' (a loop?)",
                links.len() - visited,
                links[root_link].name
            )));
        }
        Ok(model)
    }

    /// Every moving joint moves some mass: a joint whose subtree has zero mass and zero
    /// inertia makes the mass matrix singular (named here, not as a failed factorization
    /// later). One pass from the leaves up: joints come in depth-first order, so every
    /// child has a larger index than its parent.
    fn check_moving_joints(&self, model: &Model) -> Result<(), ModelError> {
        let n = model.joints.len();
        let mut moves_mass: Vec<bool> = model
            .inertias
            .iter()
            .map(|i| i.mass > 0.0 || i.rotational.iter().any(|x| *x != 0.0))
            .collect();
        for j in (1..n).rev() {
            if moves_mass[j] {
                moves_mass[model.joints[j].parent] = true;
            }
        }
        let Some(j) = (1..n).find(|&j| !moves_mass[j]) else {
            return Ok(());
        };
        let links: Vec<&str> = model
            .frames
            .iter()
            .filter(|f| f.kind == FrameKind::Body && f.parent_joint == j)
            .map(|f| f.name.as_str())
            .collect();
        Err(ModelError::InvalidInertia {
            file: self.file.to_path_buf(),
            link: links.join("', '"),
            message: format!(
                "joint '{}' moves no mass (its links and all below have zero mass and inertia): the mass matrix would be singular",
                model.joints[j].name
            ),
        })
    }

    fn not_a_tree(&self, message: String) -> ModelError {
        ModelError::NotATree {
            file: self.file.to_path_buf(),
            message,
        }
    }

    /// Child joints of every link (sorted by name) and the root link (the only link that is
    /// nobody's child).
    fn tree(&self, index: &HashMap<&str, usize>) -> Result<(Vec<Vec<usize>>, usize), ModelError> {
        let links = &self.robot.links;
        let mut children = vec![Vec::new(); links.len()];
        let mut parent_of: Vec<Option<usize>> = vec![None; links.len()];
        for (j, joint) in self.robot.joints.iter().enumerate() {
            let find = |name: &str| {
                index
                    .get(name)
                    .copied()
                    .ok_or_else(|| ModelError::UnknownLink {
                        file: self.file.to_path_buf(),
                        joint: joint.name.clone(),
                        link: name.to_string(),
                    })
            };
            let parent = find(&joint.parent)?;
            let child = find(&joint.child)?;
            if let Some(other) = parent_of[child] {
                return Err(self.not_a_tree(format!(
                    "link '{}' is the child of both joint '{}' and joint '{}'",
                    joint.child, self.robot.joints[other].name, joint.name
                )));
            }
            parent_of[child] = Some(j);
            children[parent].push(j);
        }
        let joints = &self.robot.joints;
        for list in &mut children {
            list.sort_by(|&a, &b| joints[a].name.cmp(&joints[b].name));
        }
        let roots: Vec<usize> = (0..links.len())
            .filter(|&k| parent_of[k].is_none())
            .collect();
        match roots.as_slice() {
            [root] => Ok((children, *root)),
            [] => {
                let names: Vec<String> = links
                    .iter()
                    .take(10)
                    .map(|l| format!("'{}'", l.name))
                    .collect();
                let more = links.len().saturating_sub(10);
                Err(self.not_a_tree(format!(
                    "every link has a parent joint (a loop), no root link: links {}{}",
                    names.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )))
            }
            many => Err(self.not_a_tree(format!(
                "several root links: {}",
                many.iter()
                    .map(|&k| links[k].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Adds the joint through which a link is reached: a moving joint becomes a new model
    /// joint; a fixed joint only adds a frame. Returns the moving joint carrying the child
    /// link and the link's placement in that joint's frame.
    fn add_urdf_joint(
        &self,
        model: &mut Model,
        j: usize,
        visit: &Visit,
    ) -> Result<(usize, Isometry3<f64>), ModelError> {
        let joint = &self.robot.joints[j];
        let placement = visit.placement * joint.origin;
        let axis = || {
            let a = joint.axis;
            if !a.iter().all(|x| x.is_finite()) || a.norm() < 1e-12 {
                return Err(ModelError::InvalidElement {
                    file: self.file.to_path_buf(),
                    element: format!("joint '{}'", joint.name),
                    message: format!("joint axis {a:?} is zero or not finite"),
                });
            }
            Ok(Unit::new_normalize(a))
        };
        let limit = &joint.limit;
        let (kind, lower, upper) = match joint.kind {
            JointType::Fixed => {
                model.frames.push(Frame {
                    name: joint.name.clone(),
                    parent_joint: visit.parent_joint,
                    placement,
                    kind: FrameKind::FixedJoint,
                });
                return Ok((visit.parent_joint, placement));
            }
            JointType::Revolute => (
                JointKind::Revolute { axis: axis()? },
                vec![limit.lower],
                vec![limit.upper],
            ),
            JointType::Continuous => (
                JointKind::RevoluteUnbounded { axis: axis()? },
                vec![-1.0, -1.0],
                vec![1.0, 1.0],
            ),
            JointType::Prismatic => (
                JointKind::Prismatic { axis: axis()? },
                vec![limit.lower],
                vec![limit.upper],
            ),
        };
        let id = model.add_joint(
            &joint.name,
            kind,
            visit.parent_joint,
            placement,
            [&lower, &upper, &[limit.effort], &[limit.velocity]],
        );
        model.frames.push(joint_frame(&joint.name, id));
        Ok((id, Isometry3::identity()))
    }

    /// Adds a link's body frame, merges its inertia into the carrying joint's body, and
    /// adds its collision geometries.
    fn add_link(
        &self,
        model: &mut Model,
        k: usize,
        joint: usize,
        placement: &Isometry3<f64>,
    ) -> Result<(), ModelError> {
        let link = &self.robot.links[k];
        model.frames.push(Frame {
            name: link.name.clone(),
            parent_joint: joint,
            placement: *placement,
            kind: FrameKind::Body,
        });
        let inertial = &link.inertial;
        let origin = inertial.origin;
        let r = origin.rotation.to_rotation_matrix().into_inner();
        let local = inertial.inertia;
        let invalid = |message| ModelError::InvalidInertia {
            file: self.file.to_path_buf(),
            link: link.name.clone(),
            message,
        };
        let mass = inertial.mass;
        if mass == 0.0 && local.iter().any(|x| *x != 0.0) {
            return Err(invalid(
                "mass 0 with a non-zero inertia: a body with rotational inertia has a positive mass".into(),
            ));
        }
        let body = Inertia::new(mass, origin.translation.vector, r * local * r.transpose())
            .map_err(invalid)?;
        if let Some(note) = body.triangle_inequality_violation() {
            model.notes.push(format!("link '{}': {note}", link.name));
        }
        model.inertias[joint] = model.inertias[joint].add(&body.transformed(placement));
        for (n, collision) in link.collisions.iter().enumerate() {
            let shape = self.shape(&link.name, collision)?;
            model.geometries.push(CollisionGeometry {
                name: format!("{}_{n}", link.name),
                link: link.name.clone(),
                parent_joint: joint,
                placement: placement * collision.origin,
                shape,
            });
        }
        Ok(())
    }

    fn shape(
        &self,
        link: &str,
        collision: &document::Collision,
    ) -> Result<GeometryShape, ModelError> {
        Ok(match &collision.geometry {
            Geometry::Box { size } => GeometryShape::Box {
                half_extents: size * 0.5,
            },
            Geometry::Sphere { radius } => GeometryShape::Sphere { radius: *radius },
            Geometry::Cylinder { radius, length } => GeometryShape::Cylinder {
                radius: *radius,
                half_length: length * 0.5,
            },
            Geometry::Capsule { radius, length } => GeometryShape::Capsule {
                radius: *radius,
                half_length: length * 0.5,
            },
            Geometry::Mesh { filename, scale } => GeometryShape::Mesh {
                path: self.resolve_mesh(link, filename, collision.line)?,
                scale: *scale,
            },
        })
    }

    /// Resolves a mesh URI to an existing file. A `package://` path stays inside its
    /// package: a `..` that would climb above the package's folder is refused.
    fn resolve_mesh(&self, link: &str, uri: &str, line: usize) -> Result<PathBuf, ModelError> {
        let base = self.file.parent().unwrap_or(Path::new("."));
        let candidates: Vec<PathBuf> = if let Some(rest) = uri.strip_prefix("package://") {
            if climbs_out_of_package(rest) {
                return Err(ModelError::InvalidElement {
                    file: self.file.to_path_buf(),
                    element: format!("link '{link}'"),
                    message: format!(
                        "line {line}: <mesh filename=\"{uri}\">: the path leaves its package through '..'"
                    ),
                });
            }
            self.package_dirs
                .iter()
                .map(|d| d.as_path())
                .chain(base.ancestors())
                .flat_map(|dir| {
                    let by_name = rest
                        .split_once('/')
                        .filter(|(pkg, _)| dir.file_name().is_some_and(|n| n == *pkg))
                        .map(|(_, tail)| dir.join(tail));
                    std::iter::once(dir.join(rest)).chain(by_name)
                })
                .collect()
        } else if let Some(abs) = uri.strip_prefix("file://") {
            vec![PathBuf::from(abs)]
        } else {
            vec![base.join(uri)]
        };
        candidates
            .iter()
            .find(|p| p.is_file())
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .ok_or_else(|| ModelError::MissingMesh {
                file: self.file.to_path_buf(),
                link: link.to_string(),
                uri: uri.to_string(),
                looked_for: match candidates.first() {
                    Some(first) if candidates.len() == 1 => first.display().to_string(),
                    Some(first) => format!(
                        "{} and {} other place(s)",
                        first.display(),
                        candidates.len() - 1
                    ),
                    None => "nothing".to_string(),
                },
            })
    }
}

fn joint_frame(name: &str, joint: usize) -> Frame {
    Frame {
        name: name.to_string(),
        parent_joint: joint,
        placement: Isometry3::identity(),
        kind: FrameKind::Joint,
    }
}

/// Whether `pkg/path` (a `package://` URI without its scheme) reaches above `pkg`'s
/// folder through `..` components.
fn climbs_out_of_package(rest: &str) -> bool {
    let mut components = Path::new(rest.trim_start_matches('/')).components();
    components.next();
    let mut depth = 0usize;
    for component in components {
        match component {
            Component::ParentDir if depth == 0 => return true,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    false
}
